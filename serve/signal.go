package serve

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
)

// SendSignal implements `jetwal serve --signal`: "reload=PID" (SIGHUP),
// "ldm=PID" (lame duck mode: SIGUSR2, as nats-server), "stop=PID"
// (SIGKILL), "quit=PID" (SIGINT) or "term=PID" (SIGTERM).
func SendSignal(spec string) error {
	cmd, pidStr, ok := strings.Cut(spec, "=")
	if !ok {
		return fmt.Errorf("--signal %q: want reload=PID, stop=PID or quit=PID", spec)
	}
	pid, err := strconv.Atoi(pidStr)
	if err != nil || pid <= 0 {
		return fmt.Errorf("--signal %q: bad pid %q", spec, pidStr)
	}
	sig := map[string]syscall.Signal{"reload": syscall.SIGHUP, "stop": syscall.SIGKILL, "quit": syscall.SIGINT, "term": syscall.SIGTERM,
		"ldm": syscall.SIGUSR2}[cmd]
	if sig == 0 {
		return fmt.Errorf("--signal %q: unknown signal %q (reload, ldm, stop, quit, term)", spec, cmd)
	}
	if err := syscall.Kill(pid, sig); err != nil {
		return fmt.Errorf("--signal %s: %w", spec, err)
	}
	return nil
}
