package serve

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"
)

// ShutdownTimeout bounds the graceful shutdown Run does when its context
// ends (jetwal serve: after SIGINT or SIGTERM).
const ShutdownTimeout = 10 * time.Second

// ReportTest writes what `jetwal serve -t` prints once the command line
// and its configuration file have loaded: their warnings, then success.
func (c *CommandLine) ReportTest(w io.Writer) {
	for _, wr := range c.Warnings {
		fmt.Fprintf(w, "warning: %s\n", wr)
	}
	fmt.Fprintf(w, "jetwal: configuration %s test is successful\n", cmp.Or(c.ConfigFile, "(flags only)"))
}

// OpenLog returns the logger of c's log settings: LogFile (appended to)
// or else w, at the Debug and Trace levels; closeLog closes the file.
func (c *CommandLine) OpenLog(w io.Writer) (log *slog.Logger, closeLog func() error, err error) {
	closeLog = func() error { return nil }
	if c.LogFile != "" {
		f, err := os.OpenFile(c.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, nil, err
		}
		w, closeLog = f, f.Close
	}
	return slog.New(NewLogHandler(w, c.Server.Debug, c.Server.Trace)), closeLog, nil
}

// Run starts a server of c's options logging to log, and runs it until
// ctx is done (then shuts it down within ShutdownTimeout) or lameDuck
// receives (then LameDuck, bounded by its grace and duration plus
// ShutdownTimeout). Each receive on reload reloads the configuration
// (CommandLine.Reload). A nil channel never receives; the caller wires
// them to signals (jetwal serve: SIGHUP and SIGUSR2, as nats-server's)
// before calling Run, so that none is lost once "Server is ready" is
// logged.
func (c *CommandLine) Run(ctx context.Context, log *slog.Logger, reload, lameDuck <-chan os.Signal) error {
	opts := c.Options
	opts.Logger = log
	srv, err := New(opts)
	if err != nil {
		return err
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-reload:
				c.Reload(srv, log)
			}
		}
	}()
	if err := srv.Start(); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
	case <-lameDuck:
		opts := srv.Options()
		lctx, cancel := context.WithTimeout(context.Background(), opts.LameDuckGrace+opts.LameDuckDuration+ShutdownTimeout)
		defer cancel()
		if err := srv.LameDuck(lctx); err != nil {
			return err
		}
		log.Info("Server Exiting..")
		return nil
	}
	log.Info("Initiating Shutdown...")
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	log.Info("Server Exiting..")
	return nil
}
