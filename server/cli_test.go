package server

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jetwal/jetwal/internal/syncbuf"
	"github.com/jetwal/jetwal/internal/testbin"
)

// natsCLI is the pinned nats CLI (see internal/testbin).
func natsCLI(t *testing.T) string { return testbin.NatsCLI(t) }

// syncBuffer is the shared locked output buffer (internal/syncbuf).
type syncBuffer = syncbuf.Buffer

// cliCmd prepares a nats CLI invocation against s with an empty home, so no
// saved context interferes.
func cliCmd(ctx context.Context, t *testing.T, s *Server, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	home := t.TempDir()
	cmd := exec.CommandContext(ctx, natsCLI(t), append([]string{"-s", s.ClientURL()}, args...)...)
	cmd.Env = []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "PATH=" + os.Getenv("PATH"), "TMPDIR=" + os.TempDir()}
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	return cmd, out
}

func cliContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestCLIPub(t *testing.T) {
	s := startServer(t, Options{})
	nc := connect(t, s)
	sub, _ := nc.SubscribeSync("hello.python")
	nc.Flush()
	cmd, out := cliCmd(cliContext(t), t, s, "pub", "hello.python", "Introduction to Python")
	if err := cmd.Run(); err != nil {
		t.Fatalf("nats pub: %v\n%s", err, out)
	}
	if !strings.Contains(out.String(), `Published 22 bytes to "hello.python"`) {
		t.Fatalf("unexpected CLI output:\n%s", out)
	}
	if m := nextMsg(t, sub); string(m.Data) != "Introduction to Python" {
		t.Fatalf("got %q", m.Data)
	}
}

func TestCLISubCount(t *testing.T) {
	s := startServer(t, Options{})
	cmd, out := cliCmd(cliContext(t), t, s, "sub", "hello.>", "--count", "3")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the CLI to subscribe", func() bool { return s.HasInterest("hello.python") })
	nc := connect(t, s)
	for _, body := range []string{"Python Data Types", "Python Functions and Modules", "Object-Oriented Python"} {
		nc.Publish("hello.python", []byte(body))
	}
	nc.Flush()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("nats sub --count 3: %v\n%s", err, out)
	}
	got := out.String()
	for _, want := range []string{"Python Data Types", "Object-Oriented Python", `Received on "hello.python"`} {
		if !strings.Contains(got, want) {
			t.Fatalf("output lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "Received on"); n != 3 {
		t.Fatalf("CLI printed %d messages, want 3:\n%s", n, got)
	}
}

func TestCLIRequestReply(t *testing.T) {
	s := startServer(t, Options{})
	ctx := cliContext(t)
	reply, replyOut := cliCmd(ctx, t, s, "reply", "svc.echo", "pong")
	if err := reply.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = reply.Process.Kill()
		_ = reply.Wait()
	})
	waitFor(t, "the responder to subscribe", func() bool { return s.HasInterest("svc.echo") })
	for i := 0; i < 3; i++ {
		req, out := cliCmd(ctx, t, s, "request", "svc.echo", "ping")
		if err := req.Run(); err != nil {
			t.Fatalf("nats request: %v\n%s\nresponder:\n%s", err, out, replyOut)
		}
		if !strings.Contains(out.String(), "pong") {
			t.Fatalf("request output lacks the reply:\n%s", out)
		}
	}
	// With nobody listening the CLI reports no responders (the 503 status;
	// natscli v0.5.0 still exits 0).
	req, out := cliCmd(ctx, t, s, "request", "svc.nobody", "ping")
	_ = req.Run()
	if !strings.Contains(out.String(), "No responders are available") {
		t.Fatalf("unexpected output for a request nobody answers:\n%s", out)
	}
}
