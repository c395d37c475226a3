// Command jetwal runs and inspects a jetwal server.
//
//	jetwal serve [flags]     run the NATS/JetStream server
//	jetwal verify <dir>      check a store directory, exit 1 if damaged
//	jetwal dump <segment>    print a segment's records
//	jetwal bench compare     benchmark against nats-server (bench/)
//	jetwal help [command]    show usage
//
// Each subcommand lives in its own file and is listed once in commands().
// What they do lives in library packages (serve, internal/verify, segment,
// internal/benchtool); this is flags, dispatch, signals and exit codes.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

// version is jetwal's own version (INFO reports the NATS-compatible server
// version separately, see server.DefaultVersion).
const version = "0.1.0"

// command is one subcommand. run gets the arguments after the subcommand
// name and returns the process exit code.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

// commands is the subcommand table. To add a subcommand, write a file with
// a constructor returning a command and add one line here.
func commands() map[string]command {
	return map[string]command{
		"serve":  serveCommand(),
		"verify": verifyCommand(),
		"dump":   dumpCommand(),
		"bench":  benchCommand(),
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmds := commands()
	if len(args) == 0 {
		usage(stderr, cmds)
		return 2
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			if c, ok := cmds[args[1]]; ok {
				return c.run(ctx, []string{"-h"}, stdout, stderr)
			}
		}
		usage(stdout, cmds)
		return 0
	case "version", "--version", "-v":
		fmt.Fprintf(stdout, "jetwal %s\n", version)
		return 0
	}
	c, ok := cmds[name]
	if !ok {
		fmt.Fprintf(stderr, "jetwal: unknown command %q\n\n", name)
		usage(stderr, cmds)
		return 2
	}
	return c.run(ctx, args[1:], stdout, stderr)
}

func usage(w io.Writer, cmds map[string]command) {
	fmt.Fprintf(w, "usage: jetwal <command> [flags]\n\ncommands:\n")
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintf(w, "\nRun 'jetwal help <command>' for a command's flags.\n")
}
