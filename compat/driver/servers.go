package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// server is one broker process started for the comparison: its own port on
// loopback and its own empty store directory.
type server struct {
	name string
	url  string
	cmd  *exec.Cmd
	log  *os.File
}

// freePort asks the kernel for an unused loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startServer runs bin with args built by argsFor(port, storeDir) and waits
// until its client port accepts connections. The process's output goes to
// <work>/<name>.log.
func startServer(name, bin, work string, argsFor func(port int, store string) []string) (*server, error) {
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%s binary %s: %w", name, bin, err)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	store := filepath.Join(work, name+"-store")
	if err := os.MkdirAll(store, 0o755); err != nil {
		return nil, fmt.Errorf("%s store dir: %w", name, err)
	}
	logf, err := os.Create(filepath.Join(work, name+".log"))
	if err != nil {
		return nil, fmt.Errorf("%s log file: %w", name, err)
	}
	cmd := exec.Command(bin, argsFor(port, store)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	s := &server{name: name, url: "nats://127.0.0.1:" + strconv.Itoa(port), cmd: cmd, log: logf}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
		if err == nil {
			c.Close()
			go func() { <-exited; logf.Close() }()
			return s, nil
		}
		select {
		case werr := <-exited:
			logf.Close()
			return nil, fmt.Errorf("%s exited before listening on %d (%v); see %s", name, port, werr, logf.Name())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("%s did not listen on %d within 30s; see %s", name, port, logf.Name())
		}
	}
}

// stop kills the server process; its store is discarded with the work dir.
func (s *server) stop() {
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
	}
}

// wsConfig writes a configuration file giving a server a plain-text
// WebSocket listener on a free loopback port, and returns its URL and the
// file's path.
func wsConfig(work, name string) (url, path string, err error) {
	port, err := freePort()
	if err != nil {
		return "", "", err
	}
	path = filepath.Join(work, name+".conf")
	conf := fmt.Sprintf("websocket {\n  listen: \"127.0.0.1:%d\"\n  no_tls: true\n}\n", port)
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		return "", "", fmt.Errorf("%s configuration: %w", name, err)
	}
	return "ws://127.0.0.1:" + strconv.Itoa(port), path, nil
}

// nodeFlags are the node flags the programs need: Node before 22 has a
// global WebSocket (which nats.js wsconnect uses) only with
// --experimental-websocket.
func nodeFlags(node string) []string {
	if exec.Command(node, "-e", "process.exit(typeof WebSocket === 'undefined' ? 1 : 0)").Run() != nil {
		return []string{"--experimental-websocket"}
	}
	return nil
}
