package jetstream

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/wal"
)

// The distinctive strings the encrypted scenario stores, searched for in
// every file of the store.
const (
	encStream    = "SECRETSTREAM"
	encSubject   = "zq.secret.subject.alpha"
	encHdrName   = "X-Secret-Hdr"
	encHdrValue  = "headervalue-7f3a9c"
	encPayload   = "payload-distinctive-91ab"
	encMsgID     = "msgid-distinctive-55ce"
	encConsumer  = "CONSUMERNAME-ZX"
	encCatalogue = "CATALOGONLY-QX"
)

var encNeedles = []string{encStream, "zq.secret.subject", encHdrName, encHdrValue, encPayload, encMsgID, encConsumer, encCatalogue}

func encConfig(key string) Config {
	return Config{Sync: wal.SyncAlways, Encryption: crypt.Config{Key: key}}
}

// encScenario fills a stream the way the encryption tests need: messages
// with a distinctive subject, header and payload, ids in the duplicate
// window, a per-message TTL, a durable consumer with acks (a directory of
// state) and one with none (in the catalogue only).
func encScenario(t *testing.T, ts *testServer) {
	t.Helper()
	js, _ := njs.New(ts.connect())
	ctx := ctxT(t)
	if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: encStream, Subjects: []string{"zq.secret.subject.>"},
		AllowMsgTTL: true, Duplicates: time.Hour}); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		m := nats.NewMsg(encSubject)
		m.Header.Set(encHdrName, encHdrValue)
		m.Data = []byte(encPayload)
		opts := []njs.PublishOpt{njs.WithMsgID(encMsgID + string(rune('a'+i)))}
		if i == 4 {
			opts = append(opts, njs.WithMsgTTL(time.Hour))
		}
		if _, err := js.PublishMsg(ctx, m, opts...); err != nil {
			t.Fatal(err)
		}
	}
	c, err := js.CreateOrUpdateConsumer(ctx, encStream, njs.ConsumerConfig{Durable: encConsumer,
		FilterSubject: "zq.secret.subject.>", AckPolicy: njs.AckExplicitPolicy, AckWait: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateOrUpdateConsumer(ctx, encStream, njs.ConsumerConfig{Durable: encCatalogue,
		AckPolicy: njs.AckExplicitPolicy}); err != nil {
		t.Fatal(err)
	}
	batch, err := c.Fetch(5, njs.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for m := range batch.Messages() {
		if n < 3 {
			if err := m.DoubleAck(ctx); err != nil {
				t.Fatal(err)
			}
		}
		n++
	}
	if n != 5 {
		t.Fatalf("fetched %d messages, want 5", n)
	}
}

// encCheckBack checks what encScenario stored after a restart: the
// messages, the consumer's ack floor, the duplicate window.
func encCheckBack(t *testing.T, ts *testServer) {
	t.Helper()
	if errs := ts.js.LoadErrors(); len(errs) != 0 {
		t.Fatalf("load errors: %v", errs)
	}
	js, _ := njs.New(ts.connect())
	ctx := ctxT(t)
	s, err := js.Stream(ctx, encStream)
	if err != nil {
		t.Fatal(err)
	}
	if st := s.CachedInfo().State; st.Msgs != 5 || st.LastSeq != 5 {
		t.Fatalf("stream state after restart: %+v", st)
	}
	m, err := s.GetMsg(ctx, 2)
	if err != nil || string(m.Data) != encPayload || m.Subject != encSubject || m.Header.Get(encHdrName) != encHdrValue {
		t.Fatalf("message 2 after restart: %v %+v", err, m)
	}
	c, err := s.Consumer(ctx, encConsumer)
	if err != nil {
		t.Fatal(err)
	}
	if ci := c.CachedInfo(); ci.AckFloor.Stream != 3 || ci.Delivered.Stream != 5 {
		t.Fatalf("consumer after restart: ack floor %+v delivered %+v", ci.AckFloor, ci.Delivered)
	}
	if _, err := s.Consumer(ctx, encCatalogue); err != nil {
		t.Fatalf("catalogued consumer after restart: %v", err)
	}
	ack, err := js.Publish(ctx, encSubject, []byte("again"), njs.WithMsgID(encMsgID+"c"))
	if err != nil || !ack.Duplicate {
		t.Fatalf("duplicate after restart: %v %+v", err, ack)
	}
}

// storeFiles returns the bytes of every regular file under dir.
func storeFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[p] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// treeHashes is every path under dir (directories too) with its contents'
// SHA-256.
func treeHashes(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			out[p] = "dir"
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		h := sha256.Sum256(b)
		out[p] = hex.EncodeToString(h[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for p, h := range before {
		if after[p] != h {
			t.Errorf("%s: %s changed (%s -> %q)", what, p, h, after[p])
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s: %s appeared", what, p)
		}
	}
}

// TestEncryptNoPlaintextOnDisk: with a key, no file of the store holds the
// payload, subject, header, message id, stream name or consumer names
// (names of files and directories may); everything comes back after a
// restart. The same run without a key finds every one of them, so the
// search does look where they would be.
func TestEncryptNoPlaintextOnDisk(t *testing.T) {
	for _, tc := range []struct {
		name   string
		key    string
		cipher crypt.Cipher
	}{{"plain", "", crypt.None}, {"chacha", "a long random key for the encryption test", crypt.ChaCha}, {"aes", "another long random key", crypt.AES}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := encConfig(tc.key)
			cfg.Encryption.Cipher = tc.cipher
			ts := startServer(t, cfg)
			encScenario(t, ts)
			ts = ts.restart()
			encCheckBack(t, ts)
			ts.stop()

			streamDir := filepath.Join(ts.cfg.StoreDir, "jetstream", GlobalAccount, "streams", encStream)
			files := storeFiles(t, ts.cfg.StoreDir)
			for _, want := range []string{"meta.inf", "meta.sum", dedupeFile, ttlFile, "obs/catalog.log",
				"obs/" + encConsumer + "/meta.inf", "obs/" + encConsumer + "/state.dat"} {
				if _, ok := files[filepath.Join(streamDir, want)]; !ok {
					t.Errorf("%s was not written: the scenario does not cover it", want)
				}
			}
			_, hasKey := files[filepath.Join(streamDir, msgsDir, wal.KeyFileName)]
			if hasKey != (tc.key != "") {
				t.Fatalf("key file present %v with key %q", hasKey, tc.key)
			}
			// The formats: sealed files with a key, the plain ones without.
			for f, sealedPrefix := range map[string]string{"meta.inf": sealedMagic, dedupeFile: sealedMagic, ttlFile: sealedMagic,
				"obs/" + encConsumer + "/meta.inf": "JWCM"} {
				b := files[filepath.Join(streamDir, f)]
				if sealed := bytes.HasPrefix(b, []byte(sealedPrefix)); sealed != (tc.key != "") {
					t.Errorf("%s: sealed %v with key %q: % x", f, sealed, tc.key, b[:min(len(b), 8)])
				}
			}
			for _, f := range []string{"obs/catalog.log", "obs/" + encConsumer + "/state.dat"} {
				b := files[filepath.Join(streamDir, f)]
				if sealed := len(b) > 5 && b[5] == 1; sealed != (tc.key != "") {
					t.Errorf("%s: header flagged sealed %v with key %q", f, sealed, tc.key)
				}
			}
			found := map[string][]string{}
			for p, b := range files {
				for _, n := range encNeedles {
					if bytes.Contains(b, []byte(n)) {
						found[n] = append(found[n], p)
					}
				}
			}
			for _, n := range encNeedles {
				switch {
				case tc.key != "" && len(found[n]) > 0:
					t.Errorf("%q in the clear in %v", n, found[n])
				case tc.key == "" && len(found[n]) == 0:
					t.Errorf("plain control: %q found in no file", n)
				}
			}
		})
	}
}

// TestEncryptWrongKey: a stream whose key file the configured key does not
// open (another key, or none) is not loaded, the load error names it and
// says the key does not match, and not one byte of its directory changes;
// the right key brings everything back, and so does a rotation to a new
// key with the old one as prev_key.
func TestEncryptWrongKey(t *testing.T) {
	const right = "the right key, long and random enough"
	ts := startServer(t, encConfig(right))
	encScenario(t, ts)
	ts.stop()
	streamDir := filepath.Join(ts.cfg.StoreDir, "jetstream", GlobalAccount, "streams", encStream)
	before := treeHashes(t, streamDir)

	for _, wrong := range []string{"a wrong key", ""} {
		cfg := encConfig(wrong)
		cfg.StoreDir = ts.cfg.StoreDir
		bad := startServer(t, cfg)
		errs := bad.js.LoadErrors()
		if len(errs) != 1 || !errors.Is(errs[0], wal.ErrKeyMismatch) ||
			!strings.Contains(errs[0].Error(), "stream "+encStream+":") || !strings.Contains(errs[0].Error(), "key does not match") {
			t.Fatalf("key %q: load errors %v, want one naming %s and saying the key does not match", wrong, errs, encStream)
		}
		js, _ := njs.New(bad.connect())
		if _, err := js.Stream(ctxT(t), encStream); !errors.Is(err, njs.ErrStreamNotFound) {
			t.Fatalf("key %q: the stream is served: %v", wrong, err)
		}
		// A create of the same name does not overwrite it.
		if _, err := js.CreateStream(ctxT(t), njs.StreamConfig{Name: encStream, Subjects: []string{"other"}}); err == nil {
			t.Fatalf("key %q: a stream of the same name was created over it", wrong)
		}
		bad.stop()
		sameTree(t, "key "+wrong, before, treeHashes(t, streamDir))
	}

	cfg := encConfig(right)
	cfg.StoreDir = ts.cfg.StoreDir
	good := startServer(t, cfg)
	encCheckBack(t, good)
	good.stop()

	// Rotation: the new key with the old as prev_key rewraps the key file;
	// then the new key alone opens it, and the old one no longer does.
	cfg.Encryption = crypt.Config{Key: "the new key after rotation", PrevKey: right}
	rot := startServer(t, cfg)
	if errs := rot.js.LoadErrors(); len(errs) != 0 {
		t.Fatalf("rotation: %v", errs)
	}
	rot.stop()
	cfg.Encryption = crypt.Config{Key: "the new key after rotation"}
	rot = startServer(t, cfg)
	if errs := rot.js.LoadErrors(); len(errs) != 0 {
		t.Fatalf("after rotation: %v", errs)
	}
	rot.stop()
	cfg.Encryption = crypt.Config{Key: right}
	old := startServer(t, cfg)
	if errs := old.js.LoadErrors(); len(errs) != 1 || !errors.Is(errs[0], wal.ErrKeyMismatch) {
		t.Fatalf("the rotated-away key still opens the stream: %v", errs)
	}
	old.stop()
}

// flipSealed flips a ciphertext byte of a sealed file and, when sum names
// its checksum file (meta.sum), writes the checksum of the changed bytes,
// so that only the seal can tell; trailer says the file ends with its own
// xxhash64 (state.dat), which is recomputed too.
func flipSealed(t *testing.T, path string, at int, sum string, trailer bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[at] ^= 0x01
	if trailer {
		binary.LittleEndian.PutUint64(b[len(b)-8:], xxhash.Sum64(b[:len(b)-8]))
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if sum != "" {
		if err := os.WriteFile(sum, []byte(checksum(b)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestEncryptTamperedFiles: a flipped ciphertext byte in a sealed file
// whose checksum was made to match is found by the seal: a stream's
// meta.inf refuses the stream, a consumer's meta.inf or state.dat refuses
// the consumer (each reported naming the file), a sidecar is not used (the
// stream rebuilds it from its messages). Nothing tampered is served.
func TestEncryptTamperedFiles(t *testing.T) {
	const key = "tamper test key, long and random"
	var logs syncBuffer
	cases := []struct {
		name  string
		file  string // under the stream's directory
		at    int
		meta  bool // has a meta.sum to match
		trail bool
		check func(t *testing.T, ts *testServer, path string)
	}{
		{"stream meta", "meta.inf", sealedHeader + crypt.NonceSize + 5, true, false, func(t *testing.T, ts *testServer, path string) {
			errs := ts.js.LoadErrors()
			if len(errs) != 1 || !errors.Is(errs[0], ErrMetaCorrupt) || !strings.Contains(errs[0].Error(), path) {
				t.Fatalf("load errors %v, want one naming %s", errs, path)
			}
			js, _ := njs.New(ts.connect())
			if _, err := js.Stream(ctxT(t), encStream); !errors.Is(err, njs.ErrStreamNotFound) {
				t.Fatalf("stream served from a tampered meta.inf: %v", err)
			}
		}},
		{"consumer meta", "obs/" + encConsumer + "/meta.inf", 8 + crypt.NonceSize + 2, true, false, consumerRefused},
		{"consumer state", "obs/" + encConsumer + "/state.dat", 20 + crypt.NonceSize + 1, false, true, consumerRefused},
		{"dedupe window", dedupeFile, sealedHeader + crypt.NonceSize + 3, false, false, func(t *testing.T, ts *testServer, path string) {
			if out := logs.String(); !strings.Contains(out, "duplicate window file not used") || !strings.Contains(out, path) {
				t.Fatalf("a tampered %s was not reported: %s", path, out)
			}
			encCheckBack(t, ts) // the window is rebuilt from the messages
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t, encConfig(key))
			encScenario(t, ts)
			ts.stop()
			dir := filepath.Join(ts.cfg.StoreDir, "jetstream", GlobalAccount, "streams", encStream)
			path := filepath.Join(dir, tc.file)
			sum := ""
			if tc.meta {
				sum = filepath.Join(filepath.Dir(path), "meta.sum")
			}
			flipSealed(t, path, tc.at, sum, tc.trail)
			cfg := ts.cfg
			cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
			tc.check(t, startServer(t, cfg), path)
		})
	}
}

// consumerRefused: the stream loads, the consumer whose file was tampered
// with does not, and the load error names the file.
func consumerRefused(t *testing.T, ts *testServer, path string) {
	t.Helper()
	errs := ts.js.LoadErrors()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "consumer "+encConsumer) || !strings.Contains(errs[0].Error(), path) {
		t.Fatalf("load errors %v, want one naming consumer %s and %s", errs, encConsumer, path)
	}
	js, _ := njs.New(ts.connect())
	s, err := js.Stream(ctxT(t), encStream)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Consumer(ctxT(t), encConsumer); !errors.Is(err, njs.ErrConsumerNotFound) {
		t.Fatalf("consumer served from a tampered file: %v", err)
	}
	if st := s.CachedInfo().State; st.Msgs != 5 {
		t.Fatalf("stream state %+v", st)
	}
}

// TestEncryptSnapshotRestore: a snapshot of an encrypted stream restores
// onto another encrypted server (its own key) as an encrypted stream:
// messages, consumers and the duplicate window back after a restart, and
// no plain text in its files.
func TestEncryptSnapshotRestore(t *testing.T) {
	a := startServer(t, encConfig("key of server a, long and random"))
	encScenario(t, a)
	resp, archive, _ := snapshotRaw(t, a.connect(), encStream, api.StreamSnapshotRequest{ChunkSize: 1024, WindowSize: 4096})
	if resp.Error != nil || resp.Config == nil {
		t.Fatalf("snapshot: %+v", resp)
	}
	b := startServer(t, encConfig("key of server b, long and random"))
	if out := restoreRaw(t, b.connect(), *resp.Config, archive, 4000); out.Error != nil {
		t.Fatalf("restore: %+v", out.Error)
	}
	b = b.restart()
	encCheckBack(t, b)
	b.stop()
	for p, data := range storeFiles(t, b.cfg.StoreDir) {
		for _, n := range encNeedles {
			if bytes.Contains(data, []byte(n)) {
				t.Errorf("restored store: %q in the clear in %s", n, p)
			}
		}
	}
}

// TestEncryptPlainStreamStaysPlain: a stream created without a key stays
// plain (and loads) when a key is configured later, with a warning; its
// files are not rewritten, nor does the store draw a key of its own.
func TestEncryptPlainStreamStaysPlain(t *testing.T) {
	ts := startServer(t, Config{Sync: wal.SyncAlways})
	encScenario(t, ts)
	ts.stop()
	var logs syncBuffer
	cfg := encConfig("a key configured later")
	cfg.StoreDir = ts.cfg.StoreDir
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ts2 := startServer(t, cfg)
	encCheckBack(t, ts2)
	if !strings.Contains(logs.String(), "stored in the clear although an encryption key is configured") {
		t.Fatalf("no warning: %s", logs.String())
	}
	ts2.stop()
	dir := filepath.Join(cfg.StoreDir, "jetstream", GlobalAccount, "streams", encStream)
	if _, err := os.Stat(filepath.Join(dir, msgsDir, wal.KeyFileName)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a key file appeared in a plain stream: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "meta.inf")); err != nil || !bytes.HasPrefix(b, []byte("{")) {
		t.Fatalf("meta.inf of a plain stream: %v %q", err, b)
	}
}
