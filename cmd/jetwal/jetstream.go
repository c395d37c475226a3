package main

// This file is the seam between the command and the JetStream layer.

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"

	"github.com/jetwal/jetwal/jetstream"
	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/server"
)

// configureJetStream adjusts the server options before the server is
// created (it runs only with -js).
func configureJetStream(opts *server.Options, cfg jsConfig) error {
	opts.JetStream = true
	opts.APILevel = api.Level
	return nil
}

// startJetStream starts the JetStream layer on srv before it accepts
// clients. serve closes it from a server shutdown hook.
func startJetStream(srv *server.Server, cfg jsConfig, cl jetstream.Cluster, log *slog.Logger) (*jetstream.JetStream, error) {
	root := storeRoot(cfg.StoreDir)
	if cfg.StoreDir == defaultStoreDir() {
		if err := claimDefaultStore(root); err != nil {
			return nil, err
		}
	}
	jcfg := jetstream.Config{StoreDir: root, Logger: log, MaxMemory: cfg.MaxMemory, MaxStore: cfg.MaxStore,
		Sync: cfg.Sync.Mode, SyncInterval: cfg.Sync.Interval, Domain: cfg.Domain, Cluster: cl}
	js, err := jetstream.New(srv, jcfg)
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	srv.SetStreamTracer(js.TraceStream) // message traces name the capturing stream
	return js, nil
}

// storeRoot is the store root of -sd dir, as with nats-server: streams
// live in <sd>/jetstream/$G/streams. The default store is already the
// "jetstream" directory of $TMPDIR/jetwal.
func storeRoot(dir string) string {
	if dir == defaultStoreDir() {
		return filepath.Dir(dir)
	}
	return dir
}

// claimDefaultStore makes the default store root, a predictable name in the
// world-writable temp directory, safe to use: it is created with mode 0700,
// and an existing one is used only if it is a real directory (not a
// symlink) owned by this user. Real data belongs under -sd.
func claimDefaultStore(root string) error {
	if err := os.Mkdir(root, 0o700); err == nil || !errors.Is(err, fs.ErrExist) {
		return err
	}
	fi, err := os.Lstat(root)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir() {
		return fmt.Errorf("default store %s is not a plain directory (a symlink?): refusing to use it; choose a store with -sd", root)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("default store %s belongs to uid %d, not to this user (uid %d): refusing to use it; choose a store with -sd", root, st.Uid, os.Getuid())
	}
	return nil
}
