package wal

import (
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/jetwal/jetwal/vfs"
)

// powerLossStore opens a store under SyncInterval with an interval long
// enough that nothing is fsynced by the timer, and a settable boot id.
func powerLossStore(t *testing.T, fs vfs.FS, boot *string) *Store {
	t.Helper()
	s, err := Open("/s", Options{FS: fs, Sync: SyncInterval, SyncInterval: time.Hour,
		BootID: func() string { return *boot }})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func appendN(t *testing.T, s *Store, n int) uint64 {
	t.Helper()
	var last uint64
	for range n {
		seq, _, err := s.Append("a", nil, []byte("x"))
		if err != nil {
			t.Fatal(err)
		}
		last = seq
	}
	return last
}

// TestPowerLossNeverReusesSequences: under SyncInterval, messages written
// to the OS but not fsynced are lost by a power cut; their sequences must
// not be handed to new messages after the reboot.
func TestPowerLossNeverReusesSequences(t *testing.T) {
	for _, n := range []int{1, 100, reserveStep + 10, 3*reserveStep + 10} {
		fs := vfs.NewMemFS()
		boot := "boot-1"
		s := powerLossStore(t, fs, &boot)
		acked := appendN(t, s, n)
		crashed := fs.CrashClone() // the power cut: only fsynced bytes remain
		s.Close()
		boot = "boot-2"
		r := powerLossStore(t, crashed, &boot)
		next := appendN(t, r, 1)
		if next <= acked {
			t.Fatalf("n=%d: after the power loss the next append got sequence %d, already acknowledged before it (last %d)", n, next, acked)
		}
		if r.Recovery().SkippedAfterReboot == 0 {
			t.Fatalf("n=%d: recovery reports no skipped sequences", n)
		}
		r.Close()
	}
}

// TestReservationSkipsNothingWithoutReboot: a clean close lowers the mark,
// so a reopen after a reboot goes on at the next sequence; and a mark
// written in this boot is not applied.
func TestReservationSkipsNothingWithoutReboot(t *testing.T) {
	fs := vfs.NewMemFS()
	boot := "boot-1"
	s := powerLossStore(t, fs, &boot)
	last := appendN(t, s, 50)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	boot = "boot-2"
	r := powerLossStore(t, fs, &boot)
	if next := appendN(t, r, 1); next != last+1 {
		t.Fatalf("after a clean close and a reboot the next sequence is %d, want %d", next, last+1)
	}
	if err := r.Sync(); err != nil {
		t.Fatal(err)
	}
	// The power cut happens with everything fsynced but the store open: the
	// same boot id means a process crash, and nothing is skipped.
	crashed := fs.CrashClone()
	r.Close()
	q := powerLossStore(t, crashed, &boot)
	defer q.Close()
	if got := q.Recovery().SkippedAfterReboot; got != 0 {
		t.Fatalf("same boot: skipped %d sequences", got)
	}
	if next := appendN(t, q, 1); next != last+2 {
		t.Fatalf("same boot: next sequence %d, want %d", next, last+2)
	}
}

// TestReservationTornSlot: a torn write of the newest slot leaves the
// older one, whose mark covers every sequence handed out (the newer mark
// was not durable, so nothing past the older one was handed out).
func TestReservationTornSlot(t *testing.T) {
	fs := vfs.NewMemFS()
	boot := "boot-1"
	s := powerLossStore(t, fs, &boot)
	appendN(t, s, 10)
	s.mu.Lock()
	first := s.reserve.upTo
	if err := s.writeReservationLocked(first + 5); err != nil {
		t.Fatal(err)
	}
	gen := s.reserve.gen
	s.mu.Unlock()
	// Damage the newest slot.
	f, err := fs.OpenRW(filepath.Join("/s", reserveFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xff}, int64(gen%2)*reserveSlot+9); err != nil {
		t.Fatal(err)
	}
	f.Sync()
	f.Close()
	upTo, _, _, ok := readReservation(fs, "/s")
	if !ok || upTo != first {
		t.Fatalf("after tearing the newest slot: mark %d ok %v, want the older mark %d", upTo, ok, first)
	}
	s.Close()
}

// TestNoReservation: a store whose caller owns its sequences (a raft
// replica) keeps no mark and skips nothing after a reboot: the next append
// follows what survived.
func TestNoReservation(t *testing.T) {
	fs := vfs.NewMemFS()
	open := func(fs vfs.FS, boot string) *Store {
		s, err := Open("/s", Options{FS: fs, Sync: SyncNever, NoReservation: true, BootID: func() string { return boot }})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open(fs, "boot-1")
	appendN(t, s, 10)
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	appendN(t, s, 5) // written, not fsynced: a power cut takes them
	crashed := fs.CrashClone()
	s.Close()
	r := open(crashed, "boot-2")
	defer r.Close()
	if next := appendN(t, r, 1); next != 11 {
		t.Fatalf("next sequence after the power loss %d, want 11", next)
	}
	if _, err := crashed.Stat("/s/" + reserveFile); err == nil {
		t.Fatal("a reservation file was written")
	}
}

// TestReservationAheadNeverOutruns: the next mark is written in the
// background once half a step is used; while that fsync has not returned,
// appends go on up to the durable mark and no further. A power cut at any
// point leaves a mark at or above every sequence handed out.
func TestReservationAheadNeverOutruns(t *testing.T) {
	mem := vfs.NewMemFS()
	fs, gate := gateReserveSync(mem)
	s, err := Open("/s", Options{FS: fs, Sync: SyncNever, BootID: func() string { return "boot-1" }})
	if err != nil {
		t.Fatal(err)
	}
	data := []byte("x")
	appendTo := func(last uint64) {
		t.Helper()
		s.mu.Lock()
		from := s.last
		s.mu.Unlock()
		for range last - from {
			if err := s.AppendAsync("a", nil, data, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	// checkCut takes a power cut now: the durable mark must cover every
	// sequence handed out so far.
	checkCut := func(when string) {
		t.Helper()
		s.mu.Lock()
		last := s.last
		s.mu.Unlock()
		upTo, _, _, ok := readReservation(mem.CrashClone(), "/s")
		if !ok || upTo < last {
			t.Fatalf("%s: power cut leaves mark %d (ok %v) below the handed-out sequence %d", when, upTo, ok, last)
		}
	}
	appendTo(reserveStep / 2) // the first mark, reserveStep, written in line
	checkCut("first mark")
	gate.armed.Store(true)
	appendTo(reserveStep/2 + 1) // half used: the next mark starts in the background
	release := <-gate.blocked
	appendTo(reserveStep) // up to the durable mark: no wait
	checkCut("mark write blocked, at the mark")
	done := make(chan error, 1)
	go func() { done <- s.AppendAsync("a", nil, data, nil) }()
	for range 20 {
		runtime.Gosched()
		checkCut("mark write blocked, one more append waiting")
	}
	select {
	case err := <-done:
		t.Fatalf("an append past the durable mark returned (%v) while the mark's fsync was blocked", err)
	default:
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	checkCut("mark written")
	// The append that waited doubled the step, and with fewer than half of
	// it left under 2*reserveStep started the next mark, 2*reserveStep
	// further (TestReservationStepGrowsAfterWait): wait for that one.
	s.mu.Lock()
	s.reserve.waitLocked(&s.mu)
	if s.last != reserveStep+1 || s.reserve.upTo != 4*reserveStep {
		t.Fatalf("after the marks: last %d mark %d, want %d and %d", s.last, s.reserve.upTo, reserveStep+1, 4*reserveStep)
	}
	s.mu.Unlock()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if upTo, _, _, _ := readReservation(mem, "/s"); upTo != reserveStep+1 {
		t.Fatalf("after close the mark is %d, want it lowered to the last sequence %d", upTo, reserveStep+1)
	}
}

// TestReservationCloseWaitsForAhead: Close while the next mark is being
// written waits for it, then lowers the mark; nothing is written to a
// closed file.
func TestReservationCloseWaitsForAhead(t *testing.T) {
	mem := vfs.NewMemFS()
	fs, gate := gateReserveSync(mem)
	s, err := Open("/s", Options{FS: fs, Sync: SyncInterval, SyncInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, s, 1)
	gate.armed.Store(true) // holds the next fsync only: not Close's own final mark
	appendN(t, s, reserveStep/2)
	release := <-gate.blocked
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	for range 100 {
		runtime.Gosched()
	}
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a mark was being written", err)
	default:
	}
	close(release)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if upTo, _, _, _ := readReservation(mem, "/s"); upTo != reserveStep/2+1 {
		t.Fatalf("after close the mark is %d, want %d", upTo, reserveStep/2+1)
	}
}
