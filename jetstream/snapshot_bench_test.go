package jetstream

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"testing"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/validate"
	"github.com/jetwal/jetwal/wal"
)

// BenchmarkSnapshotArchive measures writing the archive of a file stream
// of 50,000 messages of 256 random bytes (the transfer is left out), and
// BenchmarkRestoreArchive building a stream from that archive (read,
// stored with sequences and times, renamed into place, loaded). Bytes are
// message payload bytes.
func BenchmarkSnapshotArchive(b *testing.B) {
	archive, payload := benchArchive(b, true)
	b.Logf("archive of %d bytes for %d payload bytes", len(archive), payload)
}

func BenchmarkRestoreArchive(b *testing.B) {
	_, js, stop := benchServerJS(b, Config{Sync: wal.SyncNever})
	defer stop()
	archive, payload := benchArchiveOnce(b)
	cfg, aerr := validate.Stream(&api.StreamConfig{Name: "BENCH", Subjects: []string{"bench.>"}})
	if aerr != nil {
		b.Fatal(aerr)
	}
	b.SetBytes(payload)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rb := newRestoreBuilder(js, cfg)
		if err := readArchive(bytes.NewReader(archive), rb); err != nil {
			b.Fatal(err)
		}
		if _, err := rb.install(); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if aerr := js.deleteStream("BENCH"); aerr != nil {
			b.Fatal(aerr)
		}
		b.StartTimer()
	}
}

const benchSnapMsgs = 50_000

var benchSnapCache struct {
	archive []byte
	payload int64
}

func benchArchiveOnce(b *testing.B) ([]byte, int64) {
	if benchSnapCache.archive == nil {
		benchSnapCache.archive, benchSnapCache.payload = benchArchive(b, false)
	}
	return benchSnapCache.archive, benchSnapCache.payload
}

// benchArchive fills a stream and writes its archive: timed, b.N times,
// when timed is set; once otherwise.
func benchArchive(b *testing.B, timed bool) ([]byte, int64) {
	_, js, stop := benchServerJS(b, Config{Sync: wal.SyncNever})
	defer stop()
	cfg, aerr := validate.Stream(&api.StreamConfig{Name: "BENCH", Subjects: []string{"bench.>"}})
	if aerr != nil {
		b.Fatal(aerr)
	}
	s, _, aerr := js.createStream(cfg)
	if aerr != nil {
		b.Fatal(aerr)
	}
	data := make([]byte, 256)
	var payload int64
	for i := 0; i < benchSnapMsgs; i++ {
		_, _ = rand.Read(data)
		if _, _, err := s.store.Append(fmt.Sprintf("bench.%d", i%100), nil, data); err != nil {
			b.Fatal(err)
		}
		payload += int64(len(data))
	}
	n := 1
	if timed {
		n = b.N
		b.SetBytes(payload)
		b.ResetTimer()
	}
	var buf bytes.Buffer
	for i := 0; i < n; i++ {
		buf.Reset()
		if err := s.writeArchive(s.capture(true), &buf); err != nil {
			b.Fatal(err)
		}
	}
	if timed {
		b.StopTimer()
	}
	return bytes.Clone(buf.Bytes()), payload
}
