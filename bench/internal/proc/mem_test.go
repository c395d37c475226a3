package proc

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestParseStatus(t *testing.T) {
	raw := []byte("Name:\tx\nVmPeak:\t  100 kB\nVmHWM:\t    2048 kB\nVmRSS:\t    1024 kB\nRssAnon:\t     256 kB\nRssFile:\t     768 kB\nThreads:\t3\n")
	m, err := parseStatus(raw, "status")
	if err != nil {
		t.Fatal(err)
	}
	if m.RSS != 1024<<10 || m.HWM != 2048<<10 || m.Anon != 256<<10 {
		t.Fatalf("got %+v", m)
	}
	if _, err := parseStatus([]byte("VmRSS:\t12 kB\n"), "status"); err == nil {
		t.Fatal("missing VmHWM accepted")
	}
	if _, err := parseStatus([]byte("VmRSS:\tx kB\nVmHWM:\t1 kB\n"), "status"); err == nil {
		t.Fatal("non-numeric VmRSS accepted")
	}
}

func TestReadMemSelf(t *testing.T) {
	m, err := ReadMem(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if m.RSS <= 0 || m.HWM < m.RSS {
		t.Fatalf("implausible sample %+v", m)
	}
}

func TestDirSize(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "x"), make([]byte, 100), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "b", "y"), make([]byte, 28), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := DirSize(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got != 128 {
		t.Fatalf("DirSize = %d, want 128", got)
	}
}

func TestFreePort(t *testing.T) {
	p, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	if p <= 0 || p > 65535 {
		t.Fatalf("port %d", p)
	}
}

func TestParseStatCPU(t *testing.T) {
	raw := []byte("4242 (nats server) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 9 0 123 456 789\n")
	got, err := parseStatCPU(raw, "stat")
	if err != nil {
		t.Fatal(err)
	}
	if got != 3*time.Second {
		t.Fatalf("CPU time %s, want 3s (300 ticks)", got)
	}
	if _, err := parseStatCPU([]byte("1 (x) S 1 2"), "stat"); err == nil {
		t.Fatal("short stat accepted")
	}
	self, err := CPUTime(os.Getpid())
	if err != nil || self < 0 {
		t.Fatalf("own CPU time %s, %v", self, err)
	}
}
