package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetwal/jetwal/internal/syncbuf"
)

func TestRunDispatch(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), nil, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "serve") {
		t.Fatalf("no args: code %d, %q", code, errOut.String())
	}
	errOut.Reset()
	if code := run(context.Background(), []string{"nope"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), `unknown command "nope"`) {
		t.Fatalf("unknown command: code %d, %q", code, errOut.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{"help"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "serve") {
		t.Fatalf("help: code %d, %q", code, out.String())
	}
}

// lockedBuffer is the shared locked output buffer (internal/syncbuf).
type lockedBuffer = syncbuf.Buffer

var listenRE = regexp.MustCompile(`Listening for client connections on (\S+)`)

// TestServeBinarySignals builds the command and runs it twice on one
// store: the first run creates a stream, stores messages and is stopped
// with SIGINT; the second finds them (the store was closed cleanly) and is
// stopped with SIGTERM. Both runs must print the banner and exit 0.
func TestServeBinarySignals(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "jetwal")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	store := t.TempDir()

	p := startBinary(t, bin, store)
	nc := p.connect(t)
	js, err := nc.JetStream()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.AddStream(&nats.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}}); err != nil {
		t.Fatalf("add stream: %v", err)
	}
	for i := 0; i < 3; i++ {
		if _, err := js.Publish("orders.new", []byte("order")); err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
	}
	p.stop(t, os.Interrupt)
	nc.Close()

	p = startBinary(t, bin, store)
	nc = p.connect(t)
	js, err = nc.JetStream()
	if err != nil {
		t.Fatal(err)
	}
	si, err := js.StreamInfo("ORDERS")
	if err != nil {
		t.Fatalf("stream after restart: %v", err)
	}
	if si.State.Msgs != 3 || si.State.LastSeq != 3 {
		t.Fatalf("after restart: %d messages, last seq %d; want 3 and 3", si.State.Msgs, si.State.LastSeq)
	}
	p.stop(t, syscall.SIGTERM)
	nc.Close()
}

// binaryRun is one running `jetwal serve` process.
type binaryRun struct {
	cmd   *exec.Cmd
	addr  string
	lines chan string
}

// startBinary starts `jetwal serve -js` on a random port with store and
// waits for "Server is ready".
// TestServeBinaryLameDuck: `jetwal serve --signal ldm=PID` puts a running
// server in lame duck mode (lame_duck_grace_period and lame_duck_duration
// from its file): its client is told (nats.go's lame duck handler) and
// the process exits 0 once it has closed its clients and shut down.
func TestServeBinaryLameDuck(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "jetwal")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	conf := writeConf(t, "lame_duck_grace_period: \"200ms\"\nlame_duck_duration: \"1s\"\n")
	p := startBinary(t, bin, t.TempDir(), "-c", conf)
	told := make(chan struct{}, 1)
	nc, err := nats.Connect("nats://"+p.addr, nats.NoReconnect(), nats.LameDuckModeHandler(func(*nats.Conn) {
		select {
		case told <- struct{}{}:
		default:
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if code, out, errs := runCmd("serve", "--signal", fmt.Sprintf("ldm=%d", p.cmd.Process.Pid)); code != 0 {
		t.Fatalf("--signal ldm: exit %d\n%s%s", code, out, errs)
	}
	select {
	case <-told:
	case <-time.After(20 * time.Second):
		t.Fatal("the client was not told of lame duck mode")
	}
	var rest []string
	for l := range p.lines {
		rest = append(rest, l)
	}
	joined := strings.Join(rest, "\n")
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("exit after lame duck mode: %v\n%s", err, joined)
	}
	for _, want := range []string{"Entering lame duck mode", "Server Exiting"} {
		if !strings.Contains(joined, want) {
			t.Fatalf("no %q line:\n%s", want, joined)
		}
	}
}

func startBinary(t *testing.T, bin, store string, extra ...string) *binaryRun {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--port", "0", "--addr", "127.0.0.1", "-js", "--store_dir", store}, extra...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	p := &binaryRun{cmd: cmd, lines: make(chan string, 1000)}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	var banner []string
	timeout := time.After(20 * time.Second)
	for ready := false; !ready; {
		select {
		case l, ok := <-p.lines:
			if !ok {
				t.Fatalf("jetwal exited before it was ready:\n%s", strings.Join(banner, "\n"))
			}
			banner = append(banner, l)
			if m := listenRE.FindStringSubmatch(l); m != nil {
				p.addr = m[1]
			}
			ready = strings.HasSuffix(l, "[INF] Server is ready")
		case <-timeout:
			t.Fatalf("jetwal did not get ready:\n%s", strings.Join(banner, "\n"))
		}
	}
	joined := strings.Join(banner, "\n")
	for _, want := range []string{"Starting jetwal", "Max Payload:", "Store Directory: \"" + store + "\"", "Listening for client connections on 127.0.0.1:"} {
		if !strings.Contains(joined, want) {
			t.Errorf("banner lacks %q:\n%s", want, joined)
		}
	}
	return p
}

func (p *binaryRun) connect(t *testing.T) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect("nats://"+p.addr, nats.NoReconnect())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return nc
}

// stop sends sig and checks for a clean exit with the shutdown lines.
func (p *binaryRun) stop(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	var rest []string
	for l := range p.lines {
		rest = append(rest, l)
	}
	joined := strings.Join(rest, "\n")
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("exit after %v: %v\n%s", sig, err, joined)
	}
	for _, want := range []string{"Initiating Shutdown", "Server Exiting"} {
		if !strings.Contains(joined, want) {
			t.Fatalf("after %v, no %q line:\n%s", sig, want, joined)
		}
	}
}
