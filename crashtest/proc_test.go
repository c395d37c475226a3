package crashtest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetwal/jetwal/internal/syncbuf"
	"github.com/jetwal/jetwal/internal/testport"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	buildDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// jetwalBinary builds cmd/jetwal once per test binary run.
func jetwalBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "jetwal-crashtest-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(buildDir, "jetwal")
		cmd := exec.Command("go", "build", "-o", binPath, "github.com/jetwal/jetwal/cmd/jetwal")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out.String())
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// seed is JETWAL_CRASH_SEED or a random one; the test prints it.
func seed(t *testing.T) uint64 {
	t.Helper()
	if s := os.Getenv("JETWAL_CRASH_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	return rand.Uint64()
}

func envInt(name string, def int) int {
	if s := os.Getenv(name); s != "" {
		if v, err := strconv.Atoi(s); err == nil && v > 0 {
			return v
		}
	}
	return def
}

// freePorts returns n distinct free loopback ports for servers that must
// know each other's before they start (see package testport).
func freePorts(t *testing.T, n int) []int { return testport.Free(t, n) }

// freePort is one port of freePorts: the servers it is for restart on it
// after kill -9, so they cannot listen on :0 either.
func freePort(t *testing.T) int { return freePorts(t, 1)[0] }

// proc is one running jetwal server process.
type proc struct {
	cmd  *exec.Cmd
	url  string
	logs *lockedBuffer
	done chan struct{}
}

// lockedBuffer is the shared locked output buffer (internal/syncbuf).
type lockedBuffer = syncbuf.Buffer

// startServer starts `jetwal serve -js` over store with the extra flags and
// waits until it accepts a NATS connection with JetStream answering.
func startServer(t *testing.T, store string, port int, flags ...string) *proc {
	t.Helper()
	args := append([]string{"serve", "-js", "-a", "127.0.0.1", "-p", strconv.Itoa(port), "-sd", store}, flags...)
	cmd := exec.Command(jetwalBinary(t), args...)
	p := &proc{cmd: cmd, url: fmt.Sprintf("nats://127.0.0.1:%d", port), logs: &lockedBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.logs, p.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.kill() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case <-p.done:
			t.Fatalf("server exited during start: %v\n%s", cmd.ProcessState, p.logs.String())
		default:
		}
		nc, err := nats.Connect(p.url, nats.Timeout(time.Second))
		if err == nil {
			_, err = nc.Request("$JS.API.INFO", nil, 5*time.Second)
			nc.Close()
			if err == nil {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("server not ready after 30s: %v\n%s", err, p.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *proc) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// stop asks the server to shut down cleanly.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("server did not stop on SIGTERM\n%s", p.logs.String())
	}
}
