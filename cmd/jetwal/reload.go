package main

// Configuration reload: SIGHUP (or `jetwal serve --signal reload=PID`,
// which sends it) makes a running server read its configuration file
// again, with the same command-line flags on top. What changes at once is
// authentication and authorization: users, passwords, tokens, nkeys and
// permissions apply to every connection made from then on; connections
// already up keep the identity and permissions they logged in with. Other
// settings take effect at the next restart. A configuration that does not
// load, or that changes the accounts (fixed at start), is logged and the
// server keeps its current settings.

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	jetwal "github.com/jetwal/jetwal/serve"
)

// watchReload reloads on SIGHUP until stop is closed.
func watchReload(o *serveOptions, srv *jetwal.Server, log *slog.Logger, stop <-chan struct{}) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-stop:
				return
			case <-hup:
				reload(o, srv, log)
			}
		}
	}()
}

func reload(o *serveOptions, srv *jetwal.Server, log *slog.Logger) {
	if o.ConfigFile == "" {
		log.Warn("Reload requested, but the server was started without a configuration file")
		return
	}
	n, err := parseServeFlags(o.args, io.Discard)
	if err == nil {
		for _, w := range n.Warnings {
			log.Warn(w.String())
		}
		err = srv.Reload(n.Options)
	}
	if err != nil {
		log.Error("Reloading the configuration failed; keeping the current settings", "err", err)
		return
	}
	log.Info("Reloaded server configuration " + o.ConfigFile + " (authorization now; other changes at restart)")
}

// sendSignal implements --signal: "reload=PID", "ldm=PID" (lame duck mode:
// SIGUSR2, as nats-server), "stop=PID", "quit=PID" or "term=PID".
func sendSignal(spec string) error {
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
