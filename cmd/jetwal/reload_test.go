package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// lineWaiter follows a process's log lines.
type lineWaiter struct {
	lines chan string
	seen  []string
}

func (w *lineWaiter) waitFor(t *testing.T, substr string) string {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case l, ok := <-w.lines:
			if !ok {
				t.Fatalf("process exited before logging %q:\n%s", substr, strings.Join(w.seen, "\n"))
			}
			w.seen = append(w.seen, l)
			if strings.Contains(l, substr) {
				return l
			}
		case <-timeout:
			t.Fatalf("no %q in:\n%s", substr, strings.Join(w.seen, "\n"))
		}
	}
}

// TestReloadAuthorizationOnBinary changes the token in the file and
// reloads with --signal reload=PID (SIGHUP): new connections need the new
// token, an existing one stays, and a broken file changes nothing.
func TestReloadAuthorizationOnBinary(t *testing.T) {
	bin := buildJetwal(t)
	conf := writeConf(t, "listen: 127.0.0.1:0\nauthorization { token: first }\n")
	cmd := exec.Command(bin, "serve", "-c", conf)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	w := &lineWaiter{lines: make(chan string, 1000)}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			w.lines <- sc.Text()
		}
		close(w.lines)
	}()
	addr := listenRE.FindStringSubmatch(w.waitFor(t, "Listening for client connections"))[1]
	w.waitFor(t, "Server is ready")
	url := "nats://" + addr
	dial := func(token string) (*nats.Conn, error) {
		return nats.Connect(url, nats.Token(token), nats.NoReconnect())
	}
	old, err := dial("first")
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()

	if err := os.WriteFile(conf, []byte("listen: 127.0.0.1:0\nauthorization { token: second }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	signal := exec.Command(bin, "serve", "--signal", "reload="+strconv.Itoa(cmd.Process.Pid))
	if out, err := signal.CombinedOutput(); err != nil {
		t.Fatalf("--signal reload: %v\n%s", err, out)
	}
	w.waitFor(t, "Reloaded server configuration")
	if _, err := dial("first"); !errors.Is(err, nats.ErrAuthorization) {
		t.Fatalf("old token after reload: %v", err)
	}
	nc, err := dial("second")
	if err != nil {
		t.Fatalf("new token after reload: %v", err)
	}
	nc.Close()
	if err := old.Flush(); err != nil {
		t.Fatalf("existing connection dropped by reload: %v", err)
	}

	// A broken file is reported and the current settings stay.
	if err := os.WriteFile(conf, []byte("authorization { token: \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	w.waitFor(t, "Reloading the configuration failed")
	nc, err = dial("second")
	if err != nil {
		t.Fatalf("after a failed reload: %v", err)
	}
	nc.Close()
}
