package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jetwal/jetwal/bench/internal/proc"
)

// node is one server of a three-server cluster, on this machine.
type node struct {
	name, bin, kind string
	dir             string // store directory; the log is beside it
	client, route   int    // ports
	monitor, prof   int
	routes          []string // every route URL of the cluster
	cmd             *exec.Cmd
	done            chan struct{}
}

// cluster is three nodes of one implementation.
type cluster struct {
	kind  string // "jetwal" or "nats-server"
	nodes []*node
}

// newCluster prepares three nodes with free ports and store directories
// under root; it starts nothing.
func newCluster(kind, bin, root string) (*cluster, error) {
	c := &cluster{kind: kind}
	var routes []string
	for i := 1; i <= 3; i++ {
		n := &node{name: fmt.Sprintf("%s%d", kind[:2], i), bin: bin, kind: kind,
			dir: filepath.Join(root, fmt.Sprintf("%s%d", kind, i))}
		for _, p := range []*int{&n.client, &n.route, &n.monitor, &n.prof} {
			port, err := proc.FreePort()
			if err != nil {
				return nil, err
			}
			*p = port
		}
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", n.route))
		c.nodes = append(c.nodes, n)
	}
	for _, n := range c.nodes {
		n.routes = routes
	}
	return c, nil
}

// urls is the client URL list of the cluster.
func (c *cluster) urls() string {
	var u []string
	for _, n := range c.nodes {
		u = append(u, n.url())
	}
	return strings.Join(u, ",")
}

func (n *node) url() string { return fmt.Sprintf("nats://127.0.0.1:%d", n.client) }

// start launches the node on its store; it does not wait for it.
func (n *node) start() error {
	args := []string{"-js", "-a", "127.0.0.1", "-p", strconv.Itoa(n.client), "-n", n.name, "-sd", n.dir,
		"--cluster_name", "SCALE", "--cluster", fmt.Sprintf("nats://127.0.0.1:%d", n.route),
		"--routes", strings.Join(n.routes, ","), "-m", strconv.Itoa(n.monitor), "--profile", strconv.Itoa(n.prof)}
	if n.kind == "jetwal" {
		args = append([]string{"serve"}, args...)
	}
	if err := os.MkdirAll(n.dir, 0o755); err != nil {
		return err
	}
	logf, err := os.OpenFile(n.dir+".log", os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	n.cmd = exec.Command(n.bin, args...)
	n.cmd.Stdout, n.cmd.Stderr = logf, logf
	if err := n.cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start %s: %w", n.name, err)
	}
	n.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) {
		_ = cmd.Wait()
		logf.Close()
		close(done)
	}(n.cmd, n.done)
	return nil
}

// stop sends sig and waits up to 30 s for the process to exit, then kills it.
func (n *node) stop(sig syscall.Signal) {
	if n.cmd == nil {
		return
	}
	_ = n.cmd.Process.Signal(sig)
	select {
	case <-n.done:
	case <-time.After(30 * time.Second):
		_ = n.cmd.Process.Kill()
		<-n.done
	}
	n.cmd = nil
}

func (n *node) pid() int { return n.cmd.Process.Pid }

// sample is one node's resources at one moment.
type sample struct {
	cpu        time.Duration
	rss        proc.Bytes
	fds        int
	goroutines int // -1 when the profile could not be read
}

func (n *node) sample() (sample, error) {
	cpu, err := proc.CPUTime(n.pid())
	if err != nil {
		return sample{}, err
	}
	m, err := proc.ReadMem(n.pid())
	if err != nil {
		return sample{}, err
	}
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", n.pid()))
	if err != nil {
		return sample{}, err
	}
	return sample{cpu: cpu, rss: m.RSS, fds: len(ents), goroutines: n.goroutines()}, nil
}

// goroutines reads the total from the Go goroutine profile both servers
// serve with --profile; -1 if it cannot.
func (n *node) goroutines() int {
	cl := http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Get(fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/goroutine?debug=1", n.prof))
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil {
		return -1
	}
	v, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "goroutine profile: total ")))
	if err != nil {
		return -1
	}
	return v
}

// metaLeader asks the node's /jsz for the meta group's leader (a server name).
func (n *node) metaLeader() (string, error) {
	cl := http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Get(fmt.Sprintf("http://127.0.0.1:%d/jsz", n.monitor))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var jsz struct {
		Meta *struct {
			Leader string `json:"leader"`
		} `json:"meta_cluster"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&jsz); err != nil {
		return "", err
	}
	if jsz.Meta == nil || jsz.Meta.Leader == "" {
		return "", errors.New("no meta leader")
	}
	return jsz.Meta.Leader, nil
}

// byName returns the node named name, nil if none.
func (c *cluster) byName(name string) *node {
	for _, n := range c.nodes {
		if n.name == name {
			return n
		}
	}
	return nil
}

// metaLeader polls the running nodes until one names the meta leader.
func (c *cluster) metaLeader(within time.Duration) (*node, error) {
	end := time.Now().Add(within)
	for {
		for _, n := range c.nodes {
			if n.cmd == nil {
				continue
			}
			if l, err := n.metaLeader(); err == nil {
				if ln := c.byName(l); ln != nil && ln.cmd != nil {
					return ln, nil
				}
			}
		}
		if time.Now().After(end) {
			return nil, fmt.Errorf("%s: no meta leader within %s", c.kind, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (c *cluster) stopAll() {
	for _, n := range c.nodes {
		n.stop(syscall.SIGKILL)
	}
}

// saveProfile writes the server's /debug/pprof/<what> to path; failures
// are reported, not fatal.
func (n *node) saveProfile(what, path string) {
	cl := http.Client{Timeout: time.Minute}
	resp, err := cl.Get(fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/%s", n.prof, what))
	if err == nil {
		defer resp.Body.Close()
		var b []byte
		if b, err = io.ReadAll(resp.Body); err == nil {
			err = os.WriteFile(path, b, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: profile %s: %v\n", n.name, what, err)
	}
}
