package fuzz

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// recoverInput is a FuzzRecover input decoded. The layout (every field reads
// as zero once the input is exhausted, so any byte string is an input):
//
//	byte 0     flags: bit 0 SyncNever (else SyncAlways), bit 1 S2-compress
//	           sealed segments, bit 2 keep a torn tail (CrashCloneTorn)
//	byte 1     segment size: 4096 + (b%32)*512
//	byte 2     damage, bits 0-1 modulo 3: 0 none, 1 zero a 512-byte
//	           sector, 2 flip a bit; bits 2-4 the bit to flip
//	byte 3     damage file: index into the store directory's sorted names
//	bytes 4-7  damage offset inside that file (modulo its size)
//	bytes 8-15 seed of the torn-tail choice
//	byte 16    crash point: the crash follows operation b % (ops+1)
//	rest       operations, see decodeOps
type recoverInput struct {
	syncNever, compress, torn bool
	segSize                   int64
	damage                    int // 0 none, 1 zero sector, 2 bit flip
	flipBit                   uint
	damageFile                int
	damageOff                 uint32
	tornSeed                  uint64
	ops                       []op
}

type opKind int

const (
	opAppend opKind = iota
	opAppendAsync
	opSync
	opDelete
	opPurge
	opReopen
)

type op struct {
	kind    opKind
	subject string
	hdr     []byte
	size    int
	fill    byte
	target  uint8 // delete: which sequence (modulo what was handed out)
	erase   bool
	keep    uint64
	filter  string
}

// byteSrc hands out input bytes, then zeros.
type byteSrc struct {
	b []byte
	i int
}

func (s *byteSrc) next() byte {
	if s.i >= len(s.b) {
		return 0
	}
	s.i++
	return s.b[s.i-1]
}

func (s *byteSrc) done() bool { return s.i >= len(s.b) }

func (s *byteSrc) u32() uint32 {
	var b [4]byte
	for i := range b {
		b[i] = s.next()
	}
	return binary.LittleEndian.Uint32(b[:])
}

func (s *byteSrc) u64() uint64 {
	return uint64(s.u32()) | uint64(s.u32())<<32
}

var fuzzSubjects = []string{
	"a", "a.b", "a.b.c", "orders.eu.1", "orders.us.2", "x.y",
	"long." + strings.Repeat("t", 200),
}

var fuzzFilters = []string{"", ">", "a", "a.*", "orders.>", "*.*", "x.y", "nomatch"}

const maxOps = 300

func decodeRecoverInput(b []byte) recoverInput {
	src := &byteSrc{b: b}
	var in recoverInput
	fl := src.next()
	in.syncNever, in.compress, in.torn = fl&1 != 0, fl&2 != 0, fl&4 != 0
	in.segSize = 4096 + int64(src.next()%32)*512
	d := src.next()
	in.damage, in.flipBit = int(d&3)%3, uint(d>>2)&7
	in.damageFile = int(src.next())
	in.damageOff = src.u32()
	in.tornSeed = src.u64()
	crash := int(src.next())
	in.ops = decodeOps(src)
	if n := crash % (len(in.ops) + 1); n < len(in.ops) {
		in.ops = in.ops[:n]
	}
	return in
}

// decodeOps reads operations of 1-4 bytes each: an opcode byte, then its
// arguments. Opcodes (b % 16): 0-6 append, 7-8 async append (AppendAsync),
// 9-10 sync, 11-12 delete, 13 purge, 14 clean close and reopen, 15 append.
func decodeOps(src *byteSrc) []op {
	var ops []op
	for !src.done() && len(ops) < maxOps {
		c := src.next()
		switch k := c % 16; {
		case k <= 8 || k == 15:
			o := op{kind: opAppend}
			if k == 7 || k == 8 {
				o.kind = opAppendAsync
			}
			a := src.next()
			o.subject = fuzzSubjects[int(a)%len(fuzzSubjects)]
			switch (a >> 4) % 4 {
			case 1:
				o.hdr = []byte(fmt.Sprintf("NATS/1.0\r\nK: %d\r\n\r\n", len(ops)))
			case 2:
				o.hdr = []byte("NATS/1.0\r\nBig: " + strings.Repeat("h", 300) + "\r\n\r\n")
			}
			sz := src.next()
			o.size = int(sz)
			if sz >= 200 {
				o.size = int(sz-200) * 100 // up to 5.5 KB: past small segments
			}
			o.fill = c ^ byte(len(ops))
			ops = append(ops, o)
		case k <= 10:
			ops = append(ops, op{kind: opSync})
		case k <= 12:
			t := src.next()
			ops = append(ops, op{kind: opDelete, target: t, erase: c&0x80 != 0})
		case k == 13:
			a := src.next()
			ops = append(ops, op{kind: opPurge, filter: fuzzFilters[int(a)%len(fuzzFilters)], keep: uint64(a>>4) % 4})
		case k == 14:
			ops = append(ops, op{kind: opReopen})
		}
	}
	return ops
}

// payload is the data of an append: distinct per operation and position.
func (o *op) payload(n int) []byte {
	d := make([]byte, o.size)
	for i := range d {
		d[i] = o.fill + byte(i*7) + byte(n)
	}
	return d
}
