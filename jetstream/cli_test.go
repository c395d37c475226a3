package jetstream

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jetwal/jetwal/internal/testbin"
)

// natsCLI is the pinned nats CLI (see internal/testbin).
func natsCLI(t *testing.T) string { return testbin.NatsCLI(t) }

// cli runs the nats CLI against a server with an isolated home directory, so
// no user context is used.
type cli struct {
	t    *testing.T
	bin  string
	url  string
	home string
}

func newCLI(t *testing.T, ts *testServer) *cli {
	return &cli{t: t, bin: natsCLI(t), url: ts.srv.ClientURL(), home: t.TempDir()}
}

// run executes nats with args and returns its combined output and error.
func (c *cli) run(args ...string) (string, error) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	full := append([]string{"--server", c.url, "--timeout", "5s"}, args...)
	cmd := exec.CommandContext(ctx, c.bin, full...)
	cmd.Env = append(os.Environ(), "HOME="+c.home, "XDG_CONFIG_HOME="+filepath.Join(c.home, ".config"),
		"NO_COLOR=1", "TERM=dumb")
	cmd.Env = removeEnv(cmd.Env, "NATS_URL", "NATS_CONTEXT")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// ok runs nats and requires exit 0 and every want substring in the output.
func (c *cli) ok(args []string, want ...string) string {
	c.t.Helper()
	out, err := c.run(args...)
	if err != nil {
		c.t.Fatalf("nats %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			c.t.Fatalf("nats %s: output lacks %q:\n%s", strings.Join(args, " "), w, out)
		}
	}
	return out
}

// fails runs nats and requires a non-zero exit with want in the output.
func (c *cli) fails(args []string, want string) string {
	c.t.Helper()
	out, err := c.run(args...)
	if err == nil {
		c.t.Fatalf("nats %s succeeded:\n%s", strings.Join(args, " "), out)
	}
	if !strings.Contains(out, want) {
		c.t.Fatalf("nats %s: output lacks %q:\n%s", strings.Join(args, " "), want, out)
	}
	return out
}

func removeEnv(env []string, keys ...string) []string {
	out := env[:0]
next:
	for _, e := range env {
		for _, k := range keys {
			if strings.HasPrefix(e, k+"=") {
				continue next
			}
		}
		out = append(out, e)
	}
	return out
}

func args(s ...string) []string { return s }

// TestCLIWalkthrough follows the walkthrough with the real nats CLI: the
// stream add answers are given as flags.
func TestCLIWalkthrough(t *testing.T) {
	ts := startServer(t, Config{})
	c := newCLI(t, ts)

	c.ok(args("account", "info"), "JetStream Account Information", "Streams: 0")
	c.ok(args("stream", "add", "python_articles", "--subjects", "hello.python", "--storage", "file",
		"--replicas", "1", "--retention", "limits", "--discard", "old", "--max-msgs=-1",
		"--max-msgs-per-subject=-1", "--max-bytes=-1", "--max-age=-1", "--max-msg-size=-1",
		"--dupe-window=2m", "--no-allow-rollup", "--no-deny-delete", "--no-deny-purge", "--defaults"),
		"Stream python_articles was created", "Subjects: hello.python", "Duplicate Window: 2m0s")
	c.ok(args("stream", "ls"), "python_articles")
	c.ok(args("stream", "info", "python_articles"), "Storage: File", "Messages: 0")
	for _, b := range walkBodies {
		c.ok(args("pub", "hello.python", b), "Published")
	}
	c.ok(args("stream", "info", "python_articles"), "Messages: 5", "First Sequence: 1", "Last Sequence: 5")
	c.ok(args("stream", "get", "python_articles", "2"), "python_articles#2", "Python Data Types")
	c.ok(args("pub", "-J", "hello.python", "Python Generators"), "Stored in Stream: python_articles Sequence: 6")
	c.ok(args("pub", "-J", "hello.python", "Python Context Managers", "-H", "Nats-Msg-Id:article-9"), "Sequence: 7")
	c.ok(args("pub", "-J", "hello.python", "Python Context Managers", "-H", "Nats-Msg-Id:article-9"), "Sequence: 7 Duplicate: true")
	c.ok(args("stream", "get", "python_articles", "7"), "Nats-Msg-Id: article-9", "Python Context Managers")
	c.ok(args("stream", "ls", "--names"), "python_articles")
	c.ok(args("stream", "edit", "python_articles", "--max-msgs", "100", "-f"), "Maximum Messages: 100")
	c.ok(args("stream", "info", "python_articles"), "Maximum Messages: 100")
	c.ok(args("stream", "purge", "python_articles", "-f"), "Purged 7 messages", "First Sequence: 8")
	c.ok(args("stream", "rm", "python_articles", "-f"))
	c.ok(args("stream", "ls"), "No Streams defined")
	c.ok(args("account", "info"), "Streams: 0")
}

// TestCLIKeyValue drives a KV bucket (a stream with max msgs per subject,
// rollups and direct get) through the CLI.
func TestCLIKeyValue(t *testing.T) {
	ts := startServer(t, Config{})
	c := newCLI(t, ts)

	c.ok(args("kv", "add", "CONFIG", "--history", "5"), "CONFIG")
	c.ok(args("kv", "put", "CONFIG", "colour", "blue"), "blue")
	c.ok(args("kv", "put", "CONFIG", "colour", "green"), "green")
	out := c.ok(args("kv", "get", "CONFIG", "colour"), "green")
	if strings.Contains(out, "blue") {
		t.Fatalf("kv get returned an old value:\n%s", out)
	}
	c.ok(args("kv", "get", "CONFIG", "colour", "--raw"), "green")
	c.ok(args("kv", "create", "CONFIG", "size", "L"), "L")
	c.fails(args("kv", "create", "CONFIG", "size", "XL"), "exists")
	c.ok(args("kv", "del", "CONFIG", "colour", "-f"))
	c.fails(args("kv", "get", "CONFIG", "colour"), "not found")
	c.ok(args("kv", "ls"), "CONFIG")
	c.ok(args("kv", "info", "CONFIG"), "History Kept: 5")
	c.ok(args("stream", "info", "KV_CONFIG"), "Allows Rollups: true", "Direct Get: true")
	c.ok(args("kv", "purge", "CONFIG", "size", "-f"))
	c.fails(args("kv", "get", "CONFIG", "size"), "not found")
	c.ok(args("kv", "rm", "CONFIG", "-f"))
	c.ok(args("kv", "ls"), "No Key-Value buckets found")
}
