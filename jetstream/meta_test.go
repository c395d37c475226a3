package jetstream

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/validate"
	"github.com/jetwal/jetwal/vfs"
)

func testMeta(t *testing.T, name string, maxMsgs int64) *streamMeta {
	t.Helper()
	cfg, aerr := validate.Stream(&api.StreamConfig{Name: name, MaxMsgs: maxMsgs})
	if aerr != nil {
		t.Fatal(aerr)
	}
	return &streamMeta{Created: time.Date(2026, 12, 2, 8, 28, 17, 350511099, time.UTC), StreamConfig: cfg}
}

func TestMetaRoundTrip(t *testing.T) {
	fs := vfs.NewMemFS()
	dir := "/s/ORDERS"
	if err := fs.MkdirAll(dir, dirPerm); err != nil {
		t.Fatal(err)
	}
	m := testMeta(t, "ORDERS", 7)
	if err := writeMeta(fs, dir, m, fileSeal{}); err != nil {
		t.Fatal(err)
	}
	got, err := readMeta(fs, dir, fileSeal{})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Created.Equal(m.Created) || got.MaxMsgs != 7 || got.Name != "ORDERS" {
		t.Fatalf("read back %+v", got)
	}
	inf, _ := readFile(fs, filepath.Join(dir, metaFile))
	if !strings.HasPrefix(string(inf), `{"Created":"2026-12-02T08:28:17.350511099Z","name":"ORDERS",`) {
		t.Fatalf("meta.inf starts %q", inf[:60])
	}
	sum, _ := readFile(fs, filepath.Join(dir, sumFile))
	if len(sum) != sumHexChars || string(sum) != checksum(inf) {
		t.Fatalf("meta.sum %q", sum)
	}
	names, _ := fs.ReadDir(dir)
	if len(names) != 2 {
		t.Fatalf("leftover files: %v", names)
	}
}

func TestMetaDamageIsReported(t *testing.T) {
	cases := []struct {
		name   string
		damage func(fs vfs.FS, dir string)
		want   string
	}{
		{"flipped byte", func(fs vfs.FS, dir string) {
			f, _ := fs.OpenRW(filepath.Join(dir, metaFile))
			f.WriteAt([]byte("X"), 20)
			f.Close()
		}, "checksum"},
		{"missing sum", func(fs vfs.FS, dir string) { fs.Remove(filepath.Join(dir, sumFile)) }, sumFile},
		{"missing inf", func(fs vfs.FS, dir string) { fs.Remove(filepath.Join(dir, metaFile)) }, metaFile},
		{"not json", func(fs vfs.FS, dir string) {
			writeFileSync(fs, filepath.Join(dir, metaFile), []byte("{not json"))
			writeFileSync(fs, filepath.Join(dir, sumFile), []byte(checksum([]byte("{not json"))))
		}, "invalid character"},
		{"wrong name", func(fs vfs.FS, dir string) {
			m := testMeta(t, "OTHER", 0)
			writeMeta(fs, dir, m, fileSeal{})
		}, "does not match its directory"},
	}
	for _, c := range cases {
		fs := vfs.NewMemFS()
		dir := "/s/ORDERS"
		fs.MkdirAll(dir, dirPerm)
		if err := writeMeta(fs, dir, testMeta(t, "ORDERS", 0), fileSeal{}); err != nil {
			t.Fatal(err)
		}
		c.damage(fs, dir)
		_, err := readMeta(fs, dir, fileSeal{})
		if !errors.Is(err, ErrMetaCorrupt) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), dir) {
			t.Errorf("%s: got %v", c.name, err)
		}
	}
}

// TestMetaUpdateCrash stops an update at every filesystem operation it makes
// (as a power cut and as a process kill) and requires the metadata to read back as the old or the new config,
// never as damaged.
func TestMetaUpdateCrash(t *testing.T) {
	const dir = "/s/ORDERS"
	for after := 0; ; after++ {
		mem := vfs.NewMemFS()
		mem.MkdirAll(dir, dirPerm)
		mem.SyncDir("/")
		mem.SyncDir("/s")
		if err := writeMeta(mem, dir, testMeta(t, "ORDERS", 1), fileSeal{}); err != nil {
			t.Fatal(err)
		}
		// Perform only the first after mutating operations: the machine
		// stops there.
		stop := &stopAfter{FS: mem, left: after}
		err := writeMeta(stop, dir, testMeta(t, "ORDERS", 2), fileSeal{})
		crashed := mem.CrashClone()
		got, rerr := readMeta(crashed, dir, fileSeal{})
		if rerr != nil {
			t.Fatalf("stop after %d ops: %v", after, rerr)
		}
		if got.MaxMsgs != 1 && got.MaxMsgs != 2 {
			t.Fatalf("stop after %d ops: max msgs %d", after, got.MaxMsgs)
		}
		// A second read (after readMeta's own repair) agrees.
		again, rerr := readMeta(crashed, dir, fileSeal{})
		if rerr != nil || again.MaxMsgs != got.MaxMsgs {
			t.Fatalf("stop after %d ops: second read %v %v", after, again, rerr)
		}
		// A process crash (no power loss) keeps every completed operation,
		// including a rename the power cut would have lost.
		live, rerr := readMeta(mem, dir, fileSeal{})
		if rerr != nil || (live.MaxMsgs != 1 && live.MaxMsgs != 2) {
			t.Fatalf("stop after %d ops, live view: %v %v", after, live, rerr)
		}
		if err == nil {
			if got.MaxMsgs != 2 {
				t.Fatalf("completed update lost after crash")
			}
			return
		}
	}
}

// stopAfter is an FS that performs only the first left mutating operations
// and fails the rest, like a machine losing power mid-sequence.
type stopAfter struct {
	vfs.FS
	left int
}

var errStopped = errors.New("stopped")

func (s *stopAfter) step() error {
	if s.left <= 0 {
		return errStopped
	}
	s.left--
	return nil
}

func (s *stopAfter) Create(name string) (vfs.File, error) {
	if err := s.step(); err != nil {
		return nil, err
	}
	f, err := s.FS.Create(name)
	if err != nil {
		return nil, err
	}
	return &stopFile{File: f, fs: s}, nil
}

func (s *stopAfter) Rename(a, b string) error {
	if err := s.step(); err != nil {
		return err
	}
	return s.FS.Rename(a, b)
}

func (s *stopAfter) SyncDir(d string) error {
	if err := s.step(); err != nil {
		return err
	}
	return s.FS.SyncDir(d)
}

type stopFile struct {
	vfs.File
	fs *stopAfter
}

func (f *stopFile) Write(p []byte) (int, error) {
	if err := f.fs.step(); err != nil {
		return 0, err
	}
	return f.File.Write(p)
}

func (f *stopFile) Sync() error {
	if err := f.fs.step(); err != nil {
		return err
	}
	return f.File.Sync()
}
