package wal

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/cespare/xxhash/v2"
	"github.com/jetwal/jetwal/store"
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
	// maxReserveStep caps the step, which doubles each time an appender
	// had to wait for a mark (see reserveLocked).
	maxReserveStep = 1 << 22
)

type reservation struct {
	f    vfs.File
	gen  uint32
	upTo uint64 // sequences <= upTo may be handed out without another fsync
	// ahead is set while a background goroutine writes the next mark
	// (extendReservation); done is signalled when it ends. noAhead stops
	// new ones once Close has begun.
	ahead   bool
	noAhead bool
	done    *sync.Cond // on Store.mu
	step    uint64     // how far ahead the next mark goes; reserveStep at first
	grewAt  uint32     // gen of the mark whose wait last doubled step
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

// reserveLocked makes sure the next n sequences, s.last+1 to s.last+n, are
// covered by a durable mark before they are handed out. Under SyncAlways
// the record itself is durable before the ack and no mark is kept.
//
// The next mark is written ahead, in the background, once half of the
// current step is used, so an appender waits for the reservation's fsync
// only if it gets through the other half (32768 appends at first) before
// that fsync ends. Measured: the fsync waited behind the background fsync
// of a sealed segment (up to 58 ms here), and the synchronous version cost
// BenchmarkAppend/size=128/sync=never about 100 ns per append. Each mark
// that appenders had to wait for doubles the step (up to maxReserveStep,
// about a second of appends at this machine's fastest), so a stream appending
// faster than the marks' fsyncs keep up with stops waiting for them. The
// price is the gap a reboot leaves: up to a step of unused sequences.
//
// Waiting releases mu, so callers reserve before they look at the store's
// state, and an atomic batch reserves all its sequences before it starts.
// For the same reason the sequences needed are counted from s.last again
// after every wait: meanwhile other appends (which need no wait while they
// stay under the mark), SkipTo or Compact may have moved s.last on, and a
// need taken before the wait would let an append pass the durable mark, or
// an atomic batch run into it midway and release mu inside the batch.
func (s *Store) reserveLocked(n uint64) error {
	if s.opts.Sync == SyncAlways || s.opts.NoReservation {
		return nil
	}
	r := &s.reserve
	for s.last+n > r.upTo {
		if s.closed {
			return store.ErrClosed
		}
		if s.werr != nil {
			return s.werr
		}
		if r.ahead {
			if r.grewAt != r.gen { // once per mark, however many wait for it
				r.step = min(2*r.step, maxReserveStep)
				r.grewAt = r.gen
			}
			// One wake-up, then look again: the mark just written may be
			// all this append needs, though the first appender it woke
			// has started the next one already.
			r.waitEndLocked(&s.mu)
			continue
		}
		if err := s.writeReservationLocked(s.last + n - 1 + r.step); err != nil {
			return s.failLocked(err)
		}
	}
	if r.f != nil && !r.ahead && !r.noAhead && r.upTo-(s.last+n) < r.step/2 {
		r.ahead = true
		r.gen++
		go s.extendReservation(r.gen, r.upTo+r.step)
	}
	return nil
}

// waitLocked waits, with mu held exclusively, until no mark is being
// written in the background.
func (r *reservation) waitLocked(mu *sync.RWMutex) {
	for r.ahead {
		r.waitEndLocked(mu)
	}
}

// waitEndLocked waits, with mu held exclusively, for the end of the mark
// being written in the background (or a spurious wake-up).
func (r *reservation) waitEndLocked(mu *sync.RWMutex) {
	if r.done == nil {
		r.done = sync.NewCond(mu)
	}
	r.done.Wait()
}

// extendReservation writes and fsyncs the mark upTo in generation gen
// outside the store lock. While it runs (r.ahead) nothing else writes the
// file, and Close waits for it before closing the file.
func (s *Store) extendReservation(gen uint32, upTo uint64) {
	err := s.writeMark(gen, upTo)
	s.mu.Lock()
	r := &s.reserve
	r.ahead = false
	if err != nil {
		s.failLocked(err)
	} else {
		r.upTo = max(r.upTo, upTo)
	}
	if r.done != nil {
		r.done.Broadcast()
	}
	s.mu.Unlock()
}

// writeReservationLocked writes and fsyncs the mark upTo, creating the file
// on first use.
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
	if err := s.writeMark(s.reserve.gen, upTo); err != nil {
		return err
	}
	s.reserve.upTo = upTo
	return nil
}

// writeMark writes the slot of generation gen and fsyncs the file. The
// other slot keeps the previous mark, whole, if this write is torn.
func (s *Store) writeMark(gen uint32, upTo uint64) error {
	var b [reserveSlot]byte
	le := binary.LittleEndian
	copy(b[:], reserveMagic)
	le.PutUint32(b[4:], gen)
	le.PutUint64(b[8:], upTo)
	le.PutUint64(b[16:], bootHash(s.opts))
	le.PutUint64(b[24:], xxhash.Sum64(b[:24]))
	path := filepath.Join(s.dir, reserveFile)
	off := int64(gen%2) * reserveSlot
	if _, err := s.reserve.f.WriteAt(b[:], off); err != nil {
		return fmt.Errorf("wal: %s: offset %d: write sequence reservation: %w", path, off, err)
	}
	if err := s.reserve.f.Sync(); err != nil {
		return fmt.Errorf("wal: %s: sync sequence reservation: %w", path, err)
	}
	return nil
}

// closeReservationLocked runs at close and closes the file. When lower is
// set, everything was fsynced, and the mark comes down to the last
// sequence, so the next open skips nothing even after a reboot.
func (s *Store) closeReservationLocked(lower bool) error {
	if s.reserve.f == nil {
		return nil
	}
	var err error
	if lower {
		err = s.writeReservationLocked(s.last)
	}
	if cerr := s.reserve.f.Close(); err == nil {
		err = cerr
	}
	s.reserve.f = nil
	return err
}
