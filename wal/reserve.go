package wal

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/jetwal/jetwal/vfs"
)

// Under SyncInterval and SyncNever an append is acknowledged once written
// to the OS, not yet fsynced. A process crash loses nothing (the kernel
// keeps the pages), but a power loss or an OS crash may lose the last
// interval, and without more the next run would hand the lost sequences to
// new messages: two different messages acknowledged with one sequence.
//
// The reservation file prevents that. Before a sequence above the reserved
// mark is handed out, the mark moves reserveStep ahead and is fsynced: one
// fsync per reserveStep appends. At open, if the machine has rebooted since
// the mark was written (its boot id differs), sequences up to the mark may
// have been acknowledged and lost, so the store goes on after the mark. After
// a process crash on the same boot, or a clean close (which lowers the mark
// to the last sequence), nothing is skipped.
//
// File layout (little endian), two 32-byte slots written alternately so a
// torn write leaves the other intact; the valid slot with the highest
// generation wins:
//
//	offset size field
//	0      4    magic "JWSR"
//	4      4    generation
//	8      8    reserved: no sequence <= this was handed out by a lost run
//	16     8    boot id hash (xxhash64 of the kernel's boot id), 0 unknown
//	24     8    xxhash64 of bytes [0, 24)
const (
	reserveFile  = "seq.reserve"
	reserveMagic = "JWSR"
	reserveSlot  = 32
	reserveStep  = 1 << 16
)

type reservation struct {
	f    vfs.File
	gen  uint32
	upTo uint64 // sequences <= upTo may be handed out without another fsync
}

// bootIDPath is where Linux publishes an id that changes at every boot.
var bootIDPath = "/proc/sys/kernel/random/boot_id"

func bootHash(opts Options) uint64 {
	id := ""
	if opts.BootID != nil {
		id = opts.BootID()
	} else if b, err := os.ReadFile(bootIDPath); err == nil {
		id = strings.TrimSpace(string(b))
	}
	if id == "" {
		return 0
	}
	return xxhash.Sum64String(id) | 1 // never 0, which means unknown
}

// readReservation returns the mark and boot hash of the newest valid slot.
func readReservation(fs vfs.FS, dir string) (upTo, boot uint64, gen uint32, ok bool) {
	f, err := fs.Open(filepath.Join(dir, reserveFile))
	if err != nil {
		return 0, 0, 0, false
	}
	defer f.Close()
	var b [2 * reserveSlot]byte
	n, _ := f.ReadAt(b[:], 0)
	le := binary.LittleEndian
	for i := 0; i+reserveSlot <= n; i += reserveSlot {
		s := b[i : i+reserveSlot]
		if string(s[:4]) != reserveMagic || le.Uint64(s[24:]) != xxhash.Sum64(s[:24]) {
			continue
		}
		if g := le.Uint32(s[4:]); !ok || g > gen {
			gen, upTo, boot, ok = g, le.Uint64(s[8:]), le.Uint64(s[16:]), true
		}
	}
	return upTo, boot, gen, ok
}

// applyReservation runs at open, after the segments were read: it moves the
// last sequence past the mark when the machine rebooted since the mark was
// written, and returns how many sequences that skipped.
func (s *Store) applyReservation() uint64 {
	if s.opts.NoReservation {
		return 0
	}
	upTo, boot, gen, ok := readReservation(s.fs, s.dir)
	if !ok {
		return 0
	}
	s.reserveGen = gen
	if upTo <= s.last || (boot != 0 && boot == bootHash(s.opts)) {
		return 0
	}
	skipped := upTo - s.last
	s.last = upTo
	return skipped
}

// reserveLocked makes sure seq is covered by a durable mark before it is
// handed out. Under SyncAlways the record itself is durable before the ack
// and no mark is kept.
func (s *Store) reserveLocked(seq uint64) error {
	if s.opts.Sync == SyncAlways || s.opts.NoReservation || seq <= s.reserve.upTo {
		return nil
	}
	return s.writeReservationLocked(seq - 1 + reserveStep)
}

// writeReservationLocked writes and fsyncs the mark upTo.
func (s *Store) writeReservationLocked(upTo uint64) error {
	path := filepath.Join(s.dir, reserveFile)
	if s.reserve.f == nil {
		f, err := s.fs.OpenRW(path)
		if err != nil {
			if f, err = s.fs.Create(path); err != nil {
				return fmt.Errorf("wal: create %s: %w", path, err)
			}
			if err := s.fs.SyncDir(s.dir); err != nil {
				f.Close()
				return fmt.Errorf("wal: sync %s: %w", s.dir, err)
			}
		}
		s.reserve.f = f
		s.reserve.gen = s.reserveGen
	}
	s.reserve.gen++
	var b [reserveSlot]byte
	le := binary.LittleEndian
	copy(b[:], reserveMagic)
	le.PutUint32(b[4:], s.reserve.gen)
	le.PutUint64(b[8:], upTo)
	le.PutUint64(b[16:], bootHash(s.opts))
	le.PutUint64(b[24:], xxhash.Sum64(b[:24]))
	off := int64(s.reserve.gen%2) * reserveSlot
	if _, err := s.reserve.f.WriteAt(b[:], off); err != nil {
		return fmt.Errorf("wal: %s: offset %d: write sequence reservation: %w", path, off, err)
	}
	if err := s.reserve.f.Sync(); err != nil {
		return fmt.Errorf("wal: %s: sync sequence reservation: %w", path, err)
	}
	s.reserve.upTo = upTo
	return nil
}

// closeReservationLocked runs at a clean close, after everything was
// fsynced: the mark comes down to the last sequence, so the next open skips
// nothing even after a reboot.
func (s *Store) closeReservationLocked() error {
	if s.reserve.f == nil {
		return nil
	}
	err := s.writeReservationLocked(s.last)
	if cerr := s.reserve.f.Close(); err == nil {
		err = cerr
	}
	s.reserve.f = nil
	return err
}
