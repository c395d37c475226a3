package main

// This file is the seam between the command and the JetStream layer.

import (
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/jetwal/jetwal/jetstream"
	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/wal"
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
func startJetStream(srv *server.Server, cfg jsConfig, log *slog.Logger) (*jetstream.JetStream, error) {
	// -sd names the store root, as with nats-server: streams live in
	// <sd>/jetstream/$G/streams. The default store is already the
	// "jetstream" directory of $TMPDIR/jetwal.
	root := cfg.StoreDir
	if root == defaultStoreDir() {
		root = filepath.Dir(root)
	}
	jcfg := jetstream.Config{StoreDir: root, Logger: log, MaxMemory: cfg.MaxMemory, MaxStore: cfg.MaxStore}
	switch {
	case cfg.Sync.Always:
		jcfg.Sync = wal.SyncAlways
	case cfg.Sync.Interval > 0:
		jcfg.Sync, jcfg.SyncInterval = wal.SyncInterval, cfg.Sync.Interval
	default:
		jcfg.Sync = wal.SyncNever
	}
	js, err := jetstream.New(srv, jcfg)
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	return js, nil
}
