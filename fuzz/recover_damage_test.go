package fuzz

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/jetwal/jetwal/segment"
	"github.com/jetwal/jetwal/vfs"
)

// recLoc is where a record sits in the crashed store, found by scanning the
// clone before damage is injected.
type recLoc struct {
	file string
	off  int64
	size int64
}

// layout maps sequences to records on the crashed disk.
type layout struct {
	msgs       map[uint64]recLoc
	tombs      map[string][]recLoc // per file
	compressed map[string]bool
	segFiles   map[string]bool
}

func scanLayout(t *testing.T, fs vfs.FS, dir string) layout {
	l := layout{msgs: map[uint64]recLoc{}, tombs: map[string][]recLoc{}, compressed: map[string]bool{}, segFiles: map[string]bool{}}
	names, err := fs.ReadDir(dir)
	if err != nil {
		t.Fatalf("list crashed store: %v", err)
	}
	for _, n := range names {
		if !strings.HasSuffix(n, segment.SuffixPlain) && !strings.HasSuffix(n, segment.SuffixCompressed) {
			continue
		}
		p := filepath.Join(dir, n)
		l.segFiles[p] = true
		seg, err := segment.Open(fs, p, false)
		if err != nil {
			continue // a header that never became durable
		}
		l.compressed[p] = seg.Compressed()
		seg.Scan(func(off int64, r *segment.Record) error {
			loc := recLoc{file: p, off: off, size: int64(segment.EncodedSize(len(r.Subject), len(r.Header), len(r.Data)))}
			if r.Tombstone() {
				l.tombs[p] = append(l.tombs[p], loc)
			} else if _, dup := l.msgs[r.Seq]; !dup {
				l.msgs[r.Seq] = loc
			}
			return nil
		})
		seg.Close()
	}
	return l
}

// damage is what was done to the crashed disk.
type damage struct {
	file     string
	lo, hi   int64 // damaged byte range [lo, hi)
	hitSeqs  map[uint64]bool
	hitTomb  bool // a tombstone, a segment header or a compressed segment was hit
	header   bool // a segment header was hit
	zeroTail bool // zeros from a record boundary to the end of the file's records
	anything bool
}

func (d *damage) hit(seq uint64) bool { return d.hitSeqs[seq] }

// injectDamage zeroes a sector or flips a bit in one file of dir on fs and
// says which records it touched.
func injectDamage(t *testing.T, fs *vfs.MemFS, dir string, in *recoverInput, l layout) damage {
	d := damage{hitSeqs: map[uint64]bool{}}
	if in.damage == 0 {
		return d
	}
	names, err := fs.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, n := range names {
		p := filepath.Join(dir, n)
		if fi, err := fs.Stat(p); err == nil && !fi.IsDir && fi.Size > 0 {
			files = append(files, p)
		}
	}
	if len(files) == 0 {
		return d
	}
	sort.Strings(files)
	p := files[in.damageFile%len(files)]
	f, err := fs.OpenRW(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	size, _ := f.Size()
	off := int64(in.damageOff) % size
	var buf []byte
	if in.damage == 1 {
		off &^= 511
		buf = make([]byte, min(512, size-off))
	} else {
		buf = make([]byte, 1)
		f.ReadAt(buf, off)
		buf[0] ^= 1 << in.flipBit
	}
	orig := make([]byte, len(buf))
	f.ReadAt(orig, off)
	if string(orig) == string(buf) {
		return d // zeroing zeros changes nothing
	}
	if _, err := f.WriteAt(buf, off); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	d.file, d.lo, d.hi, d.anything = p, off, off+int64(len(buf)), true
	if !l.segFiles[p] {
		return d // the checkpoint: a bad one is ignored, nothing may be lost
	}
	d.header = off < segment.HeaderSize
	whole := l.compressed[p] || d.header
	if whole {
		d.hitTomb = true
	}
	for q, loc := range l.msgs {
		if loc.file == p && (whole || loc.off < d.hi && off < loc.off+loc.size) {
			d.hitSeqs[q] = true
		}
	}
	for _, loc := range l.tombs[p] {
		if loc.off < d.hi && off < loc.off+loc.size {
			d.hitTomb = true
		}
	}
	// Zeros that cover a record start and run past the last record read as
	// the end of written data to a scan reaching that start (the first
	// damaged record's, or a checkpoint's resume point): nothing on disk
	// tells them from it.
	if in.damage == 1 {
		boundary, after := false, false
		each := func(loc recLoc) {
			if loc.file == p {
				boundary = boundary || loc.off >= off && loc.off < d.hi
				after = after || loc.off+loc.size > d.hi
			}
		}
		for _, loc := range l.msgs {
			each(loc)
		}
		for _, loc := range l.tombs[p] {
			each(loc)
		}
		d.zeroTail = boundary && !after
	}
	return d
}
