// Package durable defines the one sync policy of jetwal's stores: when
// written bytes are made durable. The stream store (wal), the consumer
// state (consumerstate), the command line and the configuration file all
// use this type, so no mapping between look-alike policies can drift.
//
// What each mode promises (wal/doc.go draws it per store):
//
//	Always    an acknowledgement means fsynced: it survives a power loss
//	Interval  it means written to the operating system, fsynced within the
//	          interval: it survives a process crash (kill -9)
//	Never     it means written; the operating system decides when to flush
package durable

import (
	"fmt"
	"strings"
	"time"
)

// Mode is when appended bytes are fsynced. The zero value is Always.
type Mode uint8

const (
	// Always acknowledges only what is fsynced (concurrent writers share
	// fsyncs).
	Always Mode = iota
	// Interval acknowledges what is written and fsyncs it within the
	// policy's Interval.
	Interval
	// Never acknowledges what is written and leaves fsync to the OS.
	Never
)

func (m Mode) String() string {
	switch m {
	case Always:
		return "always"
	case Interval:
		return "interval"
	case Never:
		return "never"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// Policy is a Mode with its interval. The zero value is Always. Each store
// documents what a zero Interval means for it (its default period).
type Policy struct {
	Mode     Mode
	Interval time.Duration
}

// String renders the policy as --sync takes it: "always", "never" or the
// interval ("200ms").
func (p Policy) String() string {
	if p.Mode == Interval && p.Interval > 0 {
		return p.Interval.String()
	}
	return p.Mode.String()
}

// Parse reads a policy as --sync and the configuration file's
// jetstream.sync_interval give it: "always", "never" or a positive
// duration such as "200ms" or "2m".
func Parse(s string) (Policy, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "always", "":
		return Policy{Mode: Always}, nil
	case "never":
		return Policy{Mode: Never}, nil
	}
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d <= 0 {
		return Policy{}, fmt.Errorf("sync policy %q: want always, never or a positive duration like 200ms", s)
	}
	return Policy{Mode: Interval, Interval: d}, nil
}
