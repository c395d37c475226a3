package proc_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jetwal/jetwal/bench/internal/benchtest"
	"github.com/jetwal/jetwal/bench/internal/proc"
	"github.com/jetwal/jetwal/bench/internal/workload"
)

// TestLifecycleNATSServer starts the reference server in both modes, writes
// a stream, restarts it cleanly and after SIGKILL, and checks the data and
// the memory figures survive.
func TestLifecycleNATSServer(t *testing.T) {
	for _, mode := range proc.Modes {
		t.Run(string(mode), func(t *testing.T) {
			srv := benchtest.Start(t, benchtest.NATSServer(t), mode)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := workload.CreateStream(ctx, srv.URL(), "L", "l"); err != nil {
				t.Fatal(err)
			}
			if _, err := workload.PubAsync(ctx, workload.Params{URL: srv.URL(), Size: 64, Count: 100, Subject: "l"}); err != nil {
				t.Fatal(err)
			}
			m, err := srv.Memory()
			if err != nil {
				t.Fatal(err)
			}
			if m.RSS <= 0 || m.HWM < m.RSS {
				t.Fatalf("memory sample %+v", m)
			}
			if mode == proc.ModeSyncAlways {
				conf, err := os.ReadFile(filepath.Join(filepath.Dir(srv.StoreDir()), "nats-server.conf"))
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(conf), "sync_interval: always") {
					t.Fatalf("config lacks sync always:\n%s", conf)
				}
			}
			if err := srv.Stop(10 * time.Second); err != nil {
				t.Fatal(err)
			}
			if srv.PID() != 0 || !srv.Exited() {
				t.Fatal("stopped server still has a process")
			}
			if err := srv.Start(ctx); err != nil {
				t.Fatal(err)
			}
			assertMsgs(ctx, t, srv, 100)
			if err := srv.Kill(); err != nil {
				t.Fatal(err)
			}
			if err := srv.Start(ctx); err != nil {
				t.Fatal(err)
			}
			assertMsgs(ctx, t, srv, 100)
			if srv.PeakRSS() < m.HWM {
				t.Fatalf("peak %d below an earlier sample %d", srv.PeakRSS(), m.HWM)
			}
			size, err := proc.DirSize(srv.StoreDir())
			if err != nil {
				t.Fatal(err)
			}
			if size < 100*64 {
				t.Fatalf("store holds %d bytes, less than the payloads", size)
			}
		})
	}
}

func assertMsgs(ctx context.Context, t *testing.T, srv *proc.Server, want uint64) {
	t.Helper()
	n, err := workload.StreamMsgs(ctx, srv.URL(), "L")
	if err != nil {
		t.Fatal(err)
	}
	if n != want {
		t.Fatalf("stream holds %d messages after restart, want %d", n, want)
	}
}

// TestStartFailureReportsLog checks that a server which exits at once is
// reported with its log rather than waited on.
func TestStartFailureReportsLog(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "fake-server")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho 'bad flag' >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := proc.New(proc.Spec{Name: "fake", Kind: proc.KindNATSServer, Path: script}, proc.ModeDefault, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Remove() }()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err = s.Start(ctx)
	if err == nil || !strings.Contains(err.Error(), "bad flag") {
		t.Fatalf("Start error %v, want the log tail", err)
	}
}

func TestValidate(t *testing.T) {
	if err := (proc.Spec{Name: "x", Kind: "redis", Path: "/bin/sh"}).Validate(); err == nil {
		t.Fatal("unknown kind accepted")
	}
	if err := (proc.Spec{Name: "x", Kind: proc.KindJetwal, Path: t.TempDir()}).Validate(); err == nil {
		t.Fatal("directory accepted as binary")
	}
	if err := (proc.Spec{Kind: proc.KindJetwal, Path: "/bin/sh"}).Validate(); err == nil {
		t.Fatal("nameless spec accepted")
	}
}

// TestPeakRSSIsTheServers: the peak is the server's own, not the benchmark
// process's. Go starts children with vfork, and the kernel folds the
// parent's peak into the child's ru_maxrss: with 256 MiB touched here, a
// peak taken from ru_maxrss came out at 256 MiB or more for an idle server.
func TestPeakRSSIsTheServers(t *testing.T) {
	big := make([]byte, 256<<20)
	for i := 0; i < len(big); i += 4096 {
		big[i] = 1
	}
	srv := benchtest.Start(t, benchtest.NATSServer(t), proc.ModeDefault)
	m, err := srv.Memory()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Stop(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(big)
	if p := srv.PeakRSS(); p < m.HWM || p > 128<<20 {
		t.Fatalf("peak RSS %d MiB; the idle server's VmHWM was %d MiB, this process holds 256 MiB", p>>20, m.HWM>>20)
	}
}
