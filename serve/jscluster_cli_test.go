package serve

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jetwal/jetwal/internal/testbin"
)

var cliLeaderRE = regexp.MustCompile(`Leader: (\S+)`)

// TestClusterCLIWalkthrough: the README's clustering walkthrough with the
// pinned nats CLI: an R3 stream, publishing and pulling through different
// servers, stream info with the cluster block, step-down. The servers have
// a system account (sysConf), whose user runs the server report; the
// other commands run as a client of $G.
func TestClusterCLIWalkthrough(t *testing.T) {
	cli := testbin.NatsCLI(t)
	ms := startSysJSCluster(t, 3)
	run := func(m *member, args ...string) string {
		t.Helper()
		var out []byte
		eventually(t, strings.Join(args, " "), 60*time.Second, func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			home := t.TempDir()
			cmd := exec.CommandContext(ctx, cli, append([]string{"-s", "nats://" + m.run.addr, "--timeout", "5s"}, args...)...)
			cmd.Env = []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "PATH=" + os.Getenv("PATH")}
			var err error
			out, err = cmd.CombinedOutput()
			if err != nil {
				return &cliError{err, string(out)}
			}
			return nil
		})
		return string(out)
	}
	run(ms[0], "stream", "add", "ORDERS", "--subjects", "orders.>", "--replicas", "3", "--defaults")
	if out := run(ms[1], "pub", "orders.new", "hello"); !strings.Contains(out, `Published 5 bytes to "orders.new"`) {
		t.Fatalf("pub:\n%s", out)
	}
	// `nats pub` is a core publish: it returns once the server has the
	// message, before the stream has stored it, so stream info is polled.
	var info string
	var m []string
	eventually(t, "stream info with the message", 30*time.Second, func() error {
		info = run(ms[2], "stream", "info", "ORDERS")
		m = cliLeaderRE.FindStringSubmatch(info)
		if m == nil || strings.Count(info, "Replica: ") != 2 || !strings.Contains(info, "Messages: 1") {
			return &cliError{nil, "stream info:\n" + info}
		}
		return nil
	})
	run(ms[0], "consumer", "add", "ORDERS", "C", "--pull", "--defaults")
	if out := run(ms[2], "consumer", "next", "ORDERS", "C"); !strings.Contains(out, "hello") {
		t.Fatalf("consumer next:\n%s", out)
	}
	report := run(ms[1], append(append([]string(nil), opsUser...), "server", "report", "jetstream")...)
	for _, want := range []string{"RAFT Meta Group Information", ms[0].name, ms[1].name, ms[2].name} {
		if !strings.Contains(report, want) {
			t.Fatalf("server report jetstream lacks %q:\n%s", want, report)
		}
	}
	run(ms[1], "stream", "cluster", "step-down", "ORDERS")
	eventually(t, "new leader", 30*time.Second, func() error {
		n := cliLeaderRE.FindStringSubmatch(run(ms[0], "stream", "info", "ORDERS"))
		if n == nil || n[1] == m[1] {
			return &cliError{nil, "leader still " + m[1]}
		}
		return nil
	})
}

type cliError struct {
	err error
	out string
}

func (e *cliError) Error() string {
	if e.err == nil {
		return e.out
	}
	return e.err.Error() + "\n" + e.out
}
