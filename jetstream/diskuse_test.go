package jetstream

import (
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"
)

// diskUsage is what du reports for dir: allocated blocks, not file sizes.
func diskUsage(t testing.TB, dir string) int64 {
	t.Helper()
	var total int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			total += st.Blocks * 512
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return total
}

// TestSmallStreamSmallOnDisk: a file stream holding one 128-byte message
// takes at most 1 MiB on disk (it took 65 MiB when every stream
// preallocated a 64 MiB segment), before and after a restart.
func TestSmallStreamSmallOnDisk(t *testing.T) {
	ts := startServer(t, Config{})
	nc := ts.connect()
	request(t, nc, "$JS.API.STREAM.CREATE.KV_one", `{"name":"KV_one","subjects":["$KV.one.>"]}`)
	if _, err := nc.Request("$KV.one.key", make([]byte, 128), 5e9); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(streamsDir(ts.cfg.StoreDir, GlobalAccount), "KV_one")
	used := diskUsage(t, dir)
	t.Logf("one-message stream: %d bytes on disk", used)
	if used > 1<<20 {
		t.Fatalf("one-message stream takes %d bytes on disk, want at most 1 MiB", used)
	}
	ts = ts.restart()
	if used := diskUsage(t, dir); used > 1<<20 {
		t.Fatalf("after a restart the one-message stream takes %d bytes on disk, want at most 1 MiB", used)
	}
}
