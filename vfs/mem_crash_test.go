package vfs

import "testing"

// TestProcessCrashClone: a process crash keeps every write, synced or not;
// a power cut keeps only what was synced.
func TestProcessCrashClone(t *testing.T) {
	m := NewMemFS()
	if err := m.MkdirAll("/d", 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := m.Create("/d/f")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("unsynced")); err != nil {
		t.Fatal(err)
	}
	l, err := m.Lock("/d/LOCK")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	p := m.ProcessCrashClone()
	g, err := p.Open("/d/f")
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 8)
	if n, _ := g.ReadAt(b, 0); n != 8 || string(b) != "unsynced" {
		t.Fatalf("process crash kept %q", b[:n])
	}
	if l2, err := p.Lock("/d/LOCK"); err != nil {
		t.Fatalf("the clone holds the lock: %v", err)
	} else {
		l2.Close()
	}
	if _, err := m.CrashClone().Open("/d/f"); err == nil {
		t.Fatal("a power cut kept a file whose directory was never synced")
	}
}
