package jetstream

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jetwal/jetwal/internal/syncbuf"
)

// syncBuffer is the shared locked output buffer (internal/syncbuf).
type syncBuffer = syncbuf.Buffer

// bgCLI is a nats CLI process running in the background (nats sub).
type bgCLI struct {
	cmd *exec.Cmd
	out *syncBuffer
}

// start runs nats with args in the background; the process is stopped at
// the end of the test if the test did not stop it.
func (c *cli) start(args ...string) *bgCLI {
	c.t.Helper()
	full := append([]string{"--server", c.url}, args...)
	cmd := exec.Command(c.bin, full...)
	cmd.Env = append(os.Environ(), "HOME="+c.home, "XDG_CONFIG_HOME="+filepath.Join(c.home, ".config"),
		"NO_COLOR=1", "TERM=dumb")
	cmd.Env = removeEnv(cmd.Env, "NATS_URL", "NATS_CONTEXT")
	b := &bgCLI{cmd: cmd, out: &syncBuffer{}}
	cmd.Stdout, cmd.Stderr = b.out, b.out
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(b.stop)
	return b
}

// stop ends the process with SIGTERM (SIGKILL if it lingers).
func (b *bgCLI) stop() {
	if b.cmd.ProcessState != nil {
		return
	}
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = b.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = b.cmd.Process.Kill()
		<-done
	}
}

// waitFor waits until the process printed every want.
func (b *bgCLI) waitFor(t *testing.T, want ...string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out := b.out.String()
		missing := ""
		for _, w := range want {
			if !strings.Contains(out, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("background nats: output lacks %q:\n%s", missing, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// tty runs nats under script(1), which gives it the terminal that
// interactive commands (stream view) insist on, with stdin at EOF.
func (c *cli) tty(args ...string) string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	line := c.bin + " --server " + c.url + " --timeout 5s " + strings.Join(args, " ")
	cmd := exec.CommandContext(ctx, "script", "-qec", line, "/dev/null")
	cmd.Env = append(os.Environ(), "HOME="+c.home, "XDG_CONFIG_HOME="+filepath.Join(c.home, ".config"),
		"NO_COLOR=1", "TERM=dumb")
	cmd.Env = removeEnv(cmd.Env, "NATS_URL", "NATS_CONTEXT")
	cmd.Stdin = nil
	out, err := cmd.CombinedOutput()
	if err != nil {
		c.t.Fatalf("nats %s (under script): %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestCLIWalkthroughConsumers runs the whole seed walkthrough with the real
// nats CLI, the prompts' answers given as flags, and restarts the server
// after the consumer steps: the stream, both durable consumers and their
// positions must survive.
func TestCLIWalkthroughConsumers(t *testing.T) {
	ts := startServer(t, Config{})
	c := newCLI(t, ts)

	// Steps 1-3: account info, stream add, publishes, view, get, sub + pub.
	c.ok(args("account", "info"), "JetStream Account Information")
	c.ok(args("stream", "add", "python_articles", "--subjects", "hello.python", "--storage", "file",
		"--replicas", "1", "--retention", "limits", "--discard", "old", "--max-msgs=-1",
		"--max-msgs-per-subject=-1", "--max-bytes=-1", "--max-age=-1", "--max-msg-size=-1",
		"--dupe-window=2m", "--no-allow-rollup", "--no-deny-delete", "--no-deny-purge", "--defaults"),
		"Stream python_articles was created")
	for _, d := range []string{"obs", "msgs"} {
		if fi, err := os.Stat(filepath.Join(ts.cfg.StoreDir, "jetstream", "$G", "streams", "python_articles", d)); err != nil || !fi.IsDir() {
			t.Fatalf("stream directory %s: %v", d, err)
		}
	}
	for _, b := range walkBodies {
		c.ok(args("pub", "hello.python", b), "Published")
	}
	view := c.tty("stream", "view", "python_articles")
	for _, w := range []string{"[1] Subject: hello.python", walkBodies[0], "[5] Subject: hello.python", walkBodies[4]} {
		if !strings.Contains(view, w) {
			t.Fatalf("stream view lacks %q:\n%s", w, view)
		}
	}
	eventually(t, "pager consumer deleted", func() bool { return ts.js.lookup("python_articles").cons.count() == 0 })
	c.ok(args("stream", "get", "python_articles", "2"), "python_articles#2", walkBodies[1])
	sub := c.start("sub", "hello.python")
	sub.waitFor(t, "Subscribing on hello.python")
	c.ok(args("pub", "hello.python", "Python Error Handling"), "Published")
	sub.waitFor(t, "Python Error Handling")
	sub.stop()
	c.ok(args("stream", "info", "python_articles"), "Messages: 6", "Consumers: 0")

	// Step 4: pull consumer, consumer ls.
	c.ok(args("consumer", "add", "python_articles", "pull_consumer", "--pull", "--deliver", "all", "--ack", "explicit",
		"--replay", "instant", "--filter", "", "--max-deliver=-1", "--max-pending", "0", "--no-headers-only",
		"--backoff", "none", "--defaults"),
		"Information for Consumer python_articles > pull_consumer", "Pull Mode: true", "Ack Policy: Explicit",
		"Ack Wait: 30.00s", "Max Ack Pending: 1,000", "Max Waiting Pulls: 512", "Unprocessed Messages: 6")
	out := c.ok(args("consumer", "ls", "python_articles"), "pull_consumer")
	if !strings.Contains(out, "│           0 │           6 │ never") {
		t.Fatalf("consumer ls before next:\n%s", out)
	}

	// Step 5: consumer next --count 10 gets the six messages, then times out.
	out, err := c.run("consumer", "next", "python_articles", "pull_consumer", "--count", "10")
	if err == nil || strings.Count(out, "Acknowledged message") != 6 || !strings.Contains(out, "no message received") ||
		!strings.Contains(out, "cons seq: 6 / str seq: 6 / pending: 0") {
		t.Fatalf("consumer next: %v\n%s", err, out)
	}
	c.ok(args("consumer", "info", "python_articles", "pull_consumer"), "Unprocessed Messages: 0",
		"Outstanding Acks: 0 out of maximum 1,000", "Last Delivered Message: Consumer sequence: 6 Stream sequence: 6")
	c.ok(args("stream", "ls"), "python_articles", "│ 6  ")

	// Steps 6-7: durable push consumer to hello.archive.
	c.ok(args("consumer", "add", "python_articles", "push_consumer", "--target", "hello.archive", "--deliver", "all",
		"--ack", "none", "--replay", "instant", "--filter", "", "--max-deliver=-1", "--no-headers-only",
		"--backoff", "none", "--defaults"),
		"Information for Consumer python_articles > push_consumer", "Delivery Subject: hello.archive", "Ack Policy: None")
	archive := c.start("sub", "hello.archive")
	archive.waitFor(t, "[#6] Received", "Python Error Handling",
		"$JS.ACK.python_articles.push_consumer.1.1.1.")
	c.ok(args("pub", "hello.python", "Python Decorators"), "Published")
	archive.waitFor(t, "[#7] Received", "Python Decorators")
	c.ok(args("consumer", "info", "python_articles", "push_consumer"), "Unprocessed Messages: 0",
		"Last Delivered Message: Consumer sequence: 7 Stream sequence: 7", "Active Interest: Active")
	archive.stop()

	// Step 8: an ephemeral push consumer lives while its subscriber does.
	others := c.start("sub", "hello.others")
	others.waitFor(t, "Subscribing on hello.others")
	out = c.ok(args("consumer", "add", "--ephemeral", "python_articles", "--target", "hello.others", "--deliver", "all",
		"--ack", "none", "--replay", "instant", "--filter", "", "--max-deliver=-1", "--no-headers-only",
		"--backoff", "none", "--defaults"), "Information for Consumer python_articles > ", "Delivery Subject: hello.others")
	eph := strings.Fields(strings.SplitN(out, "python_articles > ", 2)[1])[0]
	others.waitFor(t, "[#7] Received", "Python Decorators")
	c.ok(args("consumer", "ls", "python_articles"), eph, "pull_consumer", "push_consumer")
	others.stop()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out = c.ok(args("consumer", "ls", "python_articles"), "pull_consumer", "push_consumer")
		if !strings.Contains(out, eph) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ephemeral consumer %s still listed:\n%s", eph, out)
		}
		time.Sleep(500 * time.Millisecond)
	}

	// Restart: stream and both durable consumers come back where they were.
	ts = ts.restart()
	c.url = ts.srv.ClientURL()
	c.ok(args("stream", "info", "python_articles"), "Messages: 7", "Consumers: 2")
	c.ok(args("consumer", "info", "python_articles", "pull_consumer"), "Unprocessed Messages: 1",
		"Last Delivered Message: Consumer sequence: 6 Stream sequence: 6", "Acknowledgment Floor: Consumer sequence: 6 Stream sequence: 6")
	c.ok(args("consumer", "info", "python_articles", "push_consumer"), "Unprocessed Messages: 0",
		"Last Delivered Message: Consumer sequence: 7 Stream sequence: 7")
	c.ok(args("consumer", "next", "python_articles", "pull_consumer"), "cons seq: 7 / str seq: 7 / pending: 0", "Python Decorators")

	// Step 9: purge and remove.
	c.ok(args("stream", "purge", "python_articles", "-f"), "Purged 7 messages")
	c.ok(args("stream", "rm", "python_articles", "-f"))
	c.ok(args("stream", "ls"), "No Streams defined")
	if _, err := os.Stat(filepath.Join(ts.cfg.StoreDir, "jetstream", "$G", "streams", "python_articles")); !os.IsNotExist(err) {
		t.Fatalf("stream directory left after rm: %v", err)
	}
}
