package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	jsl "github.com/jetwal/jetwal/jetstream"
	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/wal"
)

// The damage matrix: every kind of file in a store, every kind of fault.
// Each cell must end in one of three states, never silently:
//
//	recovered  nothing acknowledged is lost (300 messages, ack floor 250)
//	reported   loaded; the loss is logged at warn/error naming the file and
//	           `jetwal verify` on the damaged store exits non-zero
//	refused    the stream or consumer is not loaded, and the error names
//	           the file
//
// TestDamageMatrix prints the matrix; DAMAGE.md holds it with this test's
// name for each cell.

const (
	matrixMsgs  = 300
	matrixFloor = 250
)

type damageKind struct {
	name string
	path func(root string) string // the file, in a copy of the store at root
}

func streamDir(root string) string { return filepath.Join(root, "jetstream", "$G", "streams", "S") }

func globOne(pattern string, last bool) string {
	m, _ := filepath.Glob(pattern)
	sort.Strings(m)
	if len(m) == 0 {
		return pattern
	}
	if last {
		return m[len(m)-1]
	}
	return m[0]
}

var damageKinds = []damageKind{
	{"sealed segment", func(r string) string { return globOne(filepath.Join(streamDir(r), "msgs", "*.seg"), false) }},
	{"newest segment", func(r string) string { return globOne(filepath.Join(streamDir(r), "msgs", "*.seg"), true) }},
	{"index checkpoint", func(r string) string { return filepath.Join(streamDir(r), "msgs", "index.ckpt") }},
	{"stream meta.inf", func(r string) string { return filepath.Join(streamDir(r), "meta.inf") }},
	{"stream meta.sum", func(r string) string { return filepath.Join(streamDir(r), "meta.sum") }},
	{"duplicate window (dedupe.dat)", func(r string) string { return filepath.Join(streamDir(r), "dedupe.dat") }},
	{"consumer state log", func(r string) string { return globOne(filepath.Join(streamDir(r), "obs", "C", "state-*.log"), true) }},
	{"consumer checkpoint", func(r string) string { return filepath.Join(streamDir(r), "obs", "C", "state.dat") }},
	{"consumer meta.inf", func(r string) string { return filepath.Join(streamDir(r), "obs", "C", "meta.inf") }},
	{"consumer meta.sum", func(r string) string { return filepath.Join(streamDir(r), "obs", "C", "meta.sum") }},
	{"store lock file", func(r string) string { return filepath.Join(r, "jetstream", "LOCK") }},
}

type fault struct {
	name  string
	apply func(path string) error // returns errNotApplicable for an empty file
}

var errNotApplicable = fmt.Errorf("not applicable")

func rewrite(path string, fn func([]byte) ([]byte, error)) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if b, err = fn(b); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o640)
}

var faults = []fault{
	{"bit flip in the header", func(p string) error {
		return rewrite(p, func(b []byte) ([]byte, error) {
			if len(b) == 0 {
				return nil, errNotApplicable
			}
			b[min(2, len(b)-1)] ^= 0x08
			return b, nil
		})
	}},
	{"bit flip in a record", func(p string) error {
		return rewrite(p, func(b []byte) ([]byte, error) {
			if len(b) < 2 {
				return nil, errNotApplicable
			}
			b[len(b)/2] ^= 0x08
			return b, nil
		})
	}},
	{"truncated to zero", func(p string) error {
		return rewrite(p, func(b []byte) ([]byte, error) { return nil, nil })
	}},
	{"truncated in the middle", func(p string) error {
		return rewrite(p, func(b []byte) ([]byte, error) {
			if len(b) < 2 {
				return nil, errNotApplicable
			}
			return b[:len(b)/2], nil
		})
	}},
	{"deleted", func(p string) error { return os.Remove(p) }},
	{"extra file beside it", func(p string) error {
		name := "stray.junk"
		if strings.HasSuffix(p, ".seg") {
			name = "00000000000000000077.seg"
		}
		return os.WriteFile(filepath.Join(filepath.Dir(p), name), bytes.Repeat([]byte("junk"), 300), 0o640)
	}},
}

// matrixStore builds the base store: stream S with 300 messages over
// several segments, durable consumer C with the first 250 acked (confirmed),
// cleanly stopped.
func matrixStore(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	srv, js := startMatrix(t, root, nil)
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	jsc, _ := jetstream.New(nc)
	if _, err := jsc.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s.>"}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < matrixMsgs; i++ {
		if _, err := jsc.Publish(ctx, fmt.Sprintf("s.%d", i%7), bytes.Repeat([]byte{byte(i)}, 100)); err != nil {
			t.Fatal(err)
		}
	}
	cons, err := jsc.CreateOrUpdateConsumer(ctx, "S", jetstream.ConsumerConfig{Durable: "C", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	for acked := 0; acked < matrixFloor; {
		batch, err := cons.Fetch(min(50, matrixFloor-acked))
		if err != nil {
			t.Fatal(err)
		}
		for m := range batch.Messages() {
			if err := m.DoubleAck(ctx); err != nil {
				t.Fatal(err)
			}
			acked++
		}
	}
	nc.Close()
	stopMatrix(srv, js)
	return root
}

func startMatrix(t *testing.T, root string, log *bytes.Buffer) (*server.Server, *jsl.JetStream) {
	t.Helper()
	srv, err := server.New(server.Options{Host: "127.0.0.1", Port: 0, JetStream: true, APILevel: api.Level})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	cfg := jsl.Config{StoreDir: root, Sync: wal.SyncAlways}
	if log != nil {
		cfg.Logger = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	js, err := jsl.New(srv, cfg)
	if err != nil {
		srv.Shutdown(context.Background())
		if log != nil {
			fmt.Fprintf(log, "level=ERROR msg=%q\n", err.Error())
			return nil, nil
		}
		t.Fatal(err)
	}
	select {
	case <-js.Verified(): // damage a checkpoint spared recovery from reading is reported by now
	case <-time.After(time.Minute):
		t.Fatal("background verification did not finish")
	}
	return srv, js
}

func stopMatrix(srv *server.Server, js *jsl.JetStream) {
	if srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
}

// matrixState is what a restart on a damaged copy shows.
type matrixState struct {
	streamLoaded, consumerLoaded bool
	msgs, lost                   uint64
	floor                        uint64
}

func observe(t *testing.T, srv *server.Server) matrixState {
	var st matrixState
	if srv == nil {
		return st
	}
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	jsc, _ := jetstream.New(nc)
	s, err := jsc.Stream(ctx, "S")
	if err != nil {
		return st
	}
	info, err := s.Info(ctx)
	if err != nil {
		return st
	}
	st.streamLoaded, st.msgs = true, info.State.Msgs
	if info.State.Lost != nil {
		st.lost = uint64(len(info.State.Lost.Msgs))
	}
	c, err := s.Consumer(ctx, "C")
	if err != nil {
		return st
	}
	ci, err := c.Info(ctx)
	if err != nil {
		return st
	}
	st.consumerLoaded, st.floor = true, ci.AckFloor.Stream
	return st
}

func TestDamageMatrix(t *testing.T) {
	base := matrixStore(t)
	var table strings.Builder
	fmt.Fprintf(&table, "| file | %s |\n|---|%s\n", strings.Join(faultNames(), " | "), strings.Repeat("---|", len(faults)))
	for _, kind := range damageKinds {
		row := []string{kind.name}
		for _, f := range faults {
			root := t.TempDir()
			if err := os.CopyFS(root, os.DirFS(base)); err != nil {
				t.Fatal(err)
			}
			target := kind.path(root)
			if err := f.apply(target); err == errNotApplicable {
				row = append(row, "n/a")
				continue
			} else if err != nil {
				t.Fatalf("%s / %s: %v", kind.name, f.name, err)
			}
			code, vout, _ := runCmd("verify", root)
			var log bytes.Buffer
			srv, js := startMatrix(t, root, &log)
			st := observe(t, srv)
			stopMatrix(srv, js)
			cell := classify(st, code, log.String(), target)
			if strings.HasPrefix(cell, "SILENT") {
				t.Errorf("%s / %s: %s\nstate %+v, verify exit %d:\n%s\nlog:\n%s", kind.name, f.name, cell, st, code, vout, log.String())
			}
			row = append(row, cell)
		}
		fmt.Fprintf(&table, "| %s |\n", strings.Join(row, " | "))
	}
	t.Logf("damage matrix:\n%s", table.String())
}

func faultNames() []string {
	var n []string
	for _, f := range faults {
		n = append(n, f.name)
	}
	return n
}

// classify names the cell's outcome, or starts with SILENT when a loss or
// a refusal went unreported.
func classify(st matrixState, verifyCode int, log, target string) string {
	named := mentions(log, target)
	whole := st.streamLoaded && st.consumerLoaded && st.msgs == matrixMsgs && st.floor >= matrixFloor
	switch {
	case whole && st.lost == 0:
		return "recovered"
	case st.streamLoaded && st.consumerLoaded:
		if !named || verifyCode == 0 {
			return fmt.Sprintf("SILENT loss (named in log %v, verify exit %d)", named, verifyCode)
		}
		return fmt.Sprintf("reported (%d lost, ack floor %d)", matrixMsgs-st.msgs, st.floor)
	default:
		what := "stream"
		if st.streamLoaded {
			what = "consumer"
		}
		if !named {
			return "SILENT refusal of the " + what
		}
		return "refused (" + what + ")"
	}
}

// mentions reports whether a warn/error log line names the file (by its
// last two path elements).
func mentions(log, path string) bool {
	short := filepath.Join(filepath.Base(filepath.Dir(path)), filepath.Base(path))
	for _, line := range strings.Split(log, "\n") {
		if (strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR")) &&
			(strings.Contains(line, short) || strings.Contains(line, filepath.Dir(path))) {
			return true
		}
	}
	return false
}
