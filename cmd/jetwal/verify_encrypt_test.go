package main

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/segment"
	jetwal "github.com/jetwal/jetwal/serve"
	"github.com/jetwal/jetwal/server"
)

// TestVerifyEncrypted: jetwal verify on an encrypted server's store checks
// its structure without the key (and says the tags were not checked), the
// tags too with --key, refuses a wrong key with exit 2 (not damage), and
// reports a ciphertext byte changed under a recomputed checksum as damage
// with its file only when the key is given.
func TestVerifyEncrypted(t *testing.T) {
	root := t.TempDir()
	const key = "verify key of the test"
	s, err := jetwal.New(jetwal.Options{Server: server.Options{Host: "127.0.0.1"}, JetStream: true,
		Store: jetwal.Store{Dir: root, Encryption: crypt.Config{Key: key}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	js, _ := njs.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "SEALED", Subjects: []string{"s.>"}}); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, err := js.Publish(ctx, "s.x", []byte("a sealed message body")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := js.CreateOrUpdateConsumer(ctx, "SEALED", njs.ConsumerConfig{Durable: "C", AckPolicy: njs.AckExplicitPolicy}); err != nil {
		t.Fatal(err)
	}
	nc.Close()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	code, out, errs := runCmd("verify", root)
	if code != 0 || !strings.Contains(out, "need the key") {
		t.Fatalf("without the key: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = runCmd("verify", "--key", key, root)
	if code != 0 || !strings.Contains(out, "tag checked") {
		t.Fatalf("with the key: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = runCmd("verify", "--key", "not the key", root)
	if code != 2 || !strings.Contains(out, "KEY") || strings.Contains(out, "DAMAGED") {
		t.Fatalf("wrong key: exit %d\n%s%s", code, out, errs)
	}

	// A changed ciphertext byte whose record checksum was made to match.
	seg := filepath.Join(root, "jetstream", "$G", "streams", "SEALED", "msgs", segment.FileName(1, false))
	off := recordOffset(t, seg, 3)
	raw, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	l := int64(binary.LittleEndian.Uint32(raw[off:]))
	raw[off+segment.RecordHeader+crypt.NonceSize+3] ^= 0x10
	binary.LittleEndian.PutUint64(raw[off+l-8:], xxhash.Sum64(raw[off:off+l-8]))
	if err := os.WriteFile(seg, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runCmd("verify", root); code != 0 {
		t.Fatalf("without the key the checksums hold: exit %d\n%s", code, out)
	}
	t.Setenv("JETWAL_VERIFY_KEY", key)
	code, out, _ = runCmd("verify", root)
	if code != 1 || !strings.Contains(out, "DAMAGED") || !strings.Contains(out, seg) {
		t.Fatalf("the tampered record with the key: exit %d\n%s", code, out)
	}
}
