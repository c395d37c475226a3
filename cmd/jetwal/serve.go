package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	jetwal "github.com/jetwal/jetwal/serve"
)

func serveCommand() command {
	return command{summary: "run the NATS / JetStream server", run: runServe}
}

// runServe is `jetwal serve`: package serve parses the command line and
// runs the server; this wires SIGHUP (reload) and SIGUSR2 (lame duck mode).
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, err := jetwal.ParseCommandLine(args, version, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "jetwal serve: %v\n", err)
		if errors.As(err, new(jetwal.ConfigError)) {
			return 1
		}
		return 2
	}
	switch {
	case c.Signal != "":
		if err := jetwal.SendSignal(c.Signal); err != nil {
			fmt.Fprintf(stderr, "jetwal serve: %v\n", err)
			return 1
		}
		return 0
	case c.TestOnly:
		c.ReportTest(stdout)
		return 0
	}
	log, closeLog, err := c.OpenLog(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "jetwal serve: %v\n", err)
		return 1
	}
	defer closeLog()
	// Before the start: once "Server is ready" is logged, a SIGHUP or
	// SIGUSR2 must reach Run, not the default action (ending the process).
	hup, ldm := make(chan os.Signal, 1), make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	signal.Notify(ldm, syscall.SIGUSR2)
	defer signal.Stop(ldm)
	if err := c.Run(ctx, log, hup, ldm); err != nil {
		log.Error("fatal", "err", err)
		return 1
	}
	return 0
}
