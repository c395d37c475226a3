package jetstream

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/segment"
)

// compressibleBody is a 1 KiB message that S2 shrinks well.
func compressibleBody(i int) []byte {
	return bytes.Repeat([]byte(fmt.Sprintf("order %06d status=shipped; ", i)), 1024/29+1)[:1024]
}

// sealedBytes sums the sizes of a file stream's sealed segment files (all
// but the newest, which is preallocated) and counts the compressed ones.
func sealedBytes(t *testing.T, storeDir, stream string) (total int64, compressed int) {
	t.Helper()
	dir := filepath.Join(streamsDir(storeDir, GlobalAccount), stream, msgsDir)
	ents, err := os.ReadDir(dir) // sorted by name: the zero-padded base sequence
	if err != nil {
		t.Fatal(err)
	}
	var segs []os.DirEntry
	for _, e := range ents {
		// Segments only: not the spare made ahead of the next roll.
		if strings.HasSuffix(e.Name(), segment.SuffixPlain) || strings.HasSuffix(e.Name(), segment.SuffixCompressed) {
			segs = append(segs, e)
		}
	}
	for i, e := range segs {
		if i == len(segs)-1 {
			break
		}
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		total += fi.Size()
		if strings.HasSuffix(e.Name(), segment.SuffixCompressed) {
			compressed++
		}
	}
	return total, compressed
}

// TestCLICompressionS2 creates an S2 stream with the pinned nats CLI, as
// nats-server accepts it: the config and stream info say s2, sealed
// segments are compressed on disk, and every message reads back, also
// after a restart.
func TestCLICompressionS2(t *testing.T) {
	ts := startServer(t, fastSync())
	c := newCLI(t, ts)
	for _, name := range []string{"Z", "PLAIN"} {
		comp := "s2"
		if name == "PLAIN" {
			comp = "none"
		}
		c.ok(args("stream", "add", name, "--subjects", strings.ToLower(name)+".>", "--storage", "file",
			"--compression", comp, "--defaults"), "Stream "+name+" was created")
	}
	c.ok(args("stream", "info", "Z"), "Compression: S2 Compression")
	// An unknown algorithm is refused in nats-server's words.
	var bad api.StreamCreateResponse
	requestJSON(t, ts.connect(), api.SubjStreamCreate+"BAD", `{"name":"BAD","compression":"zz"}`, &bad)
	if bad.Error == nil || bad.Error.ErrCode != api.ErrInvalidJSON || bad.Error.Description != "invalid JSON: unknown compression algorithm" {
		t.Fatalf("compression zz: %+v", bad.Error)
	}
	c.ok(args("stream", "info", "Z", "--json"), `"compression": "s2"`)

	js, err := njs.New(ts.connect())
	if err != nil {
		t.Fatal(err)
	}
	const n = 300
	for i := 0; i < n; i++ {
		for _, subj := range []string{"z.orders", "plain.orders"} {
			if _, err := js.Publish(ctxT(t), subj, compressibleBody(i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Both streams got the same appends, so their segments split alike.
	eventually(t, "sealed segments compressed", func() bool {
		_, zComp := sealedBytes(t, ts.cfg.StoreDir, "Z")
		return zComp >= 3
	})
	zBytes, zComp := sealedBytes(t, ts.cfg.StoreDir, "Z")
	pBytes, pComp := sealedBytes(t, ts.cfg.StoreDir, "PLAIN")
	if pComp != 0 || zBytes*4 > pBytes {
		t.Fatalf("sealed segments: s2 stream %d bytes (%d compressed), plain stream %d bytes (%d compressed)",
			zBytes, zComp, pBytes, pComp)
	}
	t.Logf("sealed segments on disk: s2 %d bytes, none %d bytes", zBytes, pBytes)

	check := func(js njs.JetStream) {
		t.Helper()
		s, err := js.Stream(ctxT(t), "Z")
		if err != nil {
			t.Fatal(err)
		}
		if s.CachedInfo().Config.Compression != njs.S2Compression {
			t.Fatalf("config compression %v", s.CachedInfo().Config.Compression)
		}
		for _, seq := range []uint64{1, n / 3, n} {
			m, err := s.GetMsg(ctxT(t), seq)
			if err != nil {
				t.Fatalf("get %d: %v", seq, err)
			}
			if !bytes.Equal(m.Data, compressibleBody(int(seq-1))) {
				t.Fatalf("message %d reads back wrong", seq)
			}
		}
	}
	check(js)
	ts = ts.restart()
	js, err = njs.New(ts.connect())
	if err != nil {
		t.Fatal(err)
	}
	check(js)

	// Compression can be changed on update, as nats-server allows; the
	// segments sealed from then on are kept uncompressed.
	c = newCLI(t, ts)
	c.ok(args("stream", "edit", "Z", "--compression", "none", "-f"))
	check2, _ := js.Stream(ctxT(t), "Z")
	if check2.CachedInfo().Config.Compression != njs.NoCompression {
		t.Fatalf("after edit: %v", check2.CachedInfo().Config.Compression)
	}
}
