package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Server is one running (or stopped) server process with its own store
// directory. A Server is used by one goroutine at a time.
type Server struct {
	spec     Spec
	mode     Mode
	port     int
	root     string // temporary directory holding store, config and logs
	storeDir string
	starts   int

	// run is the current process; nil when stopped.
	run *running

	// peak is the largest resident set size seen over every start.
	peak Bytes
}

// running is one process lifetime.
type running struct {
	cmd     *exec.Cmd
	logPath string
	done    chan struct{} // closed once Wait returned

	// Set before done is closed; read only after <-done.
	waitErr error
}

// New prepares a server with a fresh temporary store directory under
// tmpRoot ("" means os.TempDir) and a free loopback port. It does not start
// the process.
func New(spec Spec, mode Mode, tmpRoot string) (*Server, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(spec.Path)
	if err != nil {
		return nil, fmt.Errorf("proc: %s binary: %w", spec.Name, err)
	}
	spec.Path = abs // the process runs in its own directory
	root, err := os.MkdirTemp(tmpRoot, "jetwal-bench-"+spec.Name+"-")
	if err != nil {
		return nil, fmt.Errorf("proc: temp dir for %s: %w", spec.Name, err)
	}
	store := filepath.Join(root, "store")
	if err := os.Mkdir(store, 0o755); err != nil {
		return nil, errors.Join(fmt.Errorf("proc: mkdir %s: %w", store, err), os.RemoveAll(root))
	}
	port, err := FreePort()
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(root))
	}
	return &Server{spec: spec, mode: mode, port: port, root: root, storeDir: store}, nil
}

// Spec returns the server's description.
func (s *Server) Spec() Spec { return s.spec }

// Mode returns the durability mode the server runs in.
func (s *Server) Mode() Mode { return s.mode }

// URL is the client URL of the server.
func (s *Server) URL() string { return fmt.Sprintf("nats://127.0.0.1:%d", s.port) }

// StoreDir is the directory the server keeps its data in.
func (s *Server) StoreDir() string { return s.storeDir }

// PID returns the process id of the running process, or 0.
func (s *Server) PID() int {
	if s.run == nil {
		return 0
	}
	return s.run.cmd.Process.Pid
}

// Start launches the process and returns once it accepts JetStream API
// requests or ctx ends.
func (s *Server) Start(ctx context.Context) error {
	if s.run != nil {
		if !s.Exited() {
			return fmt.Errorf("proc: %s already running", s.spec.Name)
		}
		s.run = nil
	}
	args, err := s.spec.args(s.mode, s.port, s.storeDir, s.root)
	if err != nil {
		return err
	}
	s.starts++
	logPath := filepath.Join(s.root, fmt.Sprintf("server-%d.log", s.starts))
	logFile, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("proc: create %s: %w", logPath, err)
	}
	cmd := exec.Command(s.spec.Path, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Dir = s.root
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return errors.Join(fmt.Errorf("proc: start %s: %w", s.spec.Path, err), logFile.Close())
	}
	r := &running{cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		r.waitErr = cmd.Wait()
		_ = logFile.Close()
		close(r.done)
	}()
	s.run = r
	if err := waitReady(ctx, s.URL(), r.done); err != nil {
		return errors.Join(fmt.Errorf("proc: %s (%s) not ready: %w%s", s.spec.Name, s.mode, err, s.logTail()), s.Kill())
	}
	return nil
}

// Memory samples the running process's memory use and remembers the peak.
func (s *Server) Memory() (Mem, error) {
	if s.run == nil {
		return Mem{}, fmt.Errorf("proc: %s not running", s.spec.Name)
	}
	m, err := ReadMem(s.PID())
	if err != nil {
		return Mem{}, err
	}
	s.notePeak(m.HWM)
	return m, nil
}

// PeakRSS is the largest resident set size observed over all of this
// server's process lifetimes (VmHWM samples; see the package doc for why
// not ru_maxrss).
func (s *Server) PeakRSS() Bytes { return s.peak }

func (s *Server) notePeak(b Bytes) {
	if b > s.peak {
		s.peak = b
	}
}

// Stop sends SIGTERM and waits up to grace for a clean exit, then SIGKILL.
// It samples memory first so the peak covers the whole lifetime.
func (s *Server) Stop(grace time.Duration) error {
	if s.run == nil {
		return nil
	}
	_, _ = s.Memory() // best effort; the rusage at exit covers a failure here
	r := s.run
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("proc: SIGTERM %s: %w", s.spec.Name, err)
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-r.done:
	case <-t.C:
		_ = r.cmd.Process.Kill()
		<-r.done
		s.run = nil
		return fmt.Errorf("proc: %s did not exit within %s of SIGTERM%s", s.spec.Name, grace, tailOf(r.logPath))
	}
	s.run = nil
	return nil
}

// Kill sends SIGKILL, as a crash would, and waits for the process to go.
func (s *Server) Kill() error {
	if s.run == nil {
		return nil
	}
	_, _ = s.Memory()
	r := s.run
	if err := r.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("proc: SIGKILL %s: %w", s.spec.Name, err)
	}
	<-r.done
	s.run = nil
	return nil
}

// Exited reports whether the current process has exited on its own.
func (s *Server) Exited() bool {
	if s.run == nil {
		return true
	}
	select {
	case <-s.run.done:
		return true
	default:
		return false
	}
}

// Remove stops the server if needed and deletes its temporary directory.
func (s *Server) Remove() error {
	errKill := s.Kill()
	return errors.Join(errKill, os.RemoveAll(s.root))
}

func (s *Server) logTail() string {
	if s.run == nil {
		return ""
	}
	return tailOf(s.run.logPath)
}

// tailOf returns the last lines of a log file, formatted for an error.
func tailOf(path string) string {
	raw, err := os.ReadFile(path)
	if err != nil || len(raw) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	if len(lines) > 8 {
		lines = lines[len(lines)-8:]
	}
	return "\n  log " + path + ":\n    " + strings.Join(lines, "\n    ")
}
