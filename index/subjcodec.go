package index

import (
	"encoding/binary"
	"fmt"
)

// The checkpoint's subject section (format in checkpoint.go, unchanged by
// the table): per subject its name, summary and sequence list. A subject of
// one or two messages keeps no list in memory; it is written as the list
// its messages would make (First, then Last), and read back without one.

// shortList is the encoded list of a subject without a list: n entries, the
// varint delta of Last from First when there are two.
func shortList(e *entry) (n int, buf []byte) {
	if e.first == e.last {
		return 1, nil
	}
	return 2, binary.AppendUvarint(nil, e.last-e.first)
}

func (x *Subjects) encodedSize() int {
	n := 4
	x.each(func(id uint32) {
		e := x.ent(id)
		n += 2 + refLen(e.name) + 8*3 + 4 + 8 + 4 + 4
		if e.list == 0 {
			_, buf := shortList(e)
			n += 12 + len(buf)
			return
		}
		l := x.lists.at(e.list - 1)
		n += 12*len(l.marks) + len(l.buf)
	})
	return n
}

func (x *Subjects) encode(enc *encoder) {
	enc.u32(uint32(x.Len()))
	x.each(func(id uint32) {
		e := x.ent(id)
		name := x.nameOf(e)
		enc.u16(uint16(len(name)))
		enc.bytes(name)
		enc.u64(x.count(id, e))
		enc.u64(e.first)
		enc.u64(e.last)
		if e.list == 0 {
			n, buf := shortList(e)
			enc.u32(uint32(n))
			enc.u64(e.last)
			enc.u32(1)
			enc.u64(e.first)
			enc.u32(0)
			enc.u32(uint32(len(buf)))
			enc.bytes(buf)
			return
		}
		l := x.lists.at(e.list - 1)
		enc.u32(uint32(l.n))
		enc.u64(l.last)
		enc.u32(uint32(len(l.marks)))
		for _, m := range l.marks {
			enc.u64(m.seq)
			enc.u32(m.off)
		}
		enc.u32(uint32(len(l.buf)))
		enc.bytes(l.buf)
	})
}

// decode reads the subject section into x (empty). A short read is left in
// r.err for the caller; inconsistent entries are returned as errors.
func (x *Subjects) decode(r *reader) error {
	ns := r.count(2)
	for i := 0; i < ns && r.err == nil; i++ {
		name := r.take(int(r.u16()))
		msgs, first, last := r.u64(), r.u64(), r.u64()
		var l seqList
		l.n = int(r.u32())
		l.last = r.u64()
		nm := r.count(12)
		l.marks = make([]listMark, nm)
		for j := range l.marks {
			l.marks[j] = listMark{seq: r.u64(), off: r.u32()}
		}
		l.buf = append([]byte(nil), r.take(r.count(1))...)
		if r.err != nil {
			return nil
		}
		if msgs == 0 || nm == 0 || (l.n+listBlock-1)/listBlock != nm || first > last {
			return fmt.Errorf("inconsistent subject entry %s", name)
		}
		for _, m := range l.marks {
			if int(m.off) > len(l.buf) {
				return fmt.Errorf("subject %s: list mark out of range", name)
			}
		}
		if err := x.load(name, msgs, first, last, l); err != nil {
			return err
		}
	}
	return nil
}

// load adds a subject read from a checkpoint; a subject of at most two
// messages drops its list.
func (x *Subjects) load(name []byte, msgs, first, last uint64, l seqList) error {
	h := x.hashBytes(name)
	if _, _, ok := x.findBytes(name, h); ok {
		return fmt.Errorf("duplicate subject %s", name)
	}
	if x.tab.full() {
		x.grow()
	}
	_, slot, _ := x.findBytes(name, h)
	id := x.insert(slot, h, x.names.putBytes(name), first)
	e := x.ent(id)
	e.last, e.msgs = last, uint32(msgs)
	if msgs>>32 != 0 {
		x.overAdd(id, int64(msgs>>32))
	}
	if msgs > 2 {
		lid := x.newList()
		*x.lists.at(lid) = l
		e.list = lid + 1
	}
	x.untouch()
	return nil
}
