package vfs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/jetwal/jetwal/internal/resident"
)

// TestCoolRange: cooling part of an OS mapping takes those pages, and only
// those, out of the resident set; its bytes read back unchanged.
func TestCoolRange(t *testing.T) {
	const size, mib = 8 << 20, 1 << 20
	path := filepath.Join(t.TempDir(), "f")
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i / 4096)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Default.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := f.Map(size)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Unmap()
	touch := func() {
		for i := 0; i < size; i += 4096 {
			if m.Bytes()[i] != data[i] {
				t.Fatalf("byte %d reads %d, want %d", i, m.Bytes()[i], data[i])
			}
		}
	}
	rss := func() int64 {
		n, err := resident.FileRSS(path)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	touch()
	if got := rss(); got < size-mib/4 {
		t.Fatalf("%d bytes resident after reading all %d", got, size)
	}
	// Aligned to 2 MiB: a file mapped with huge pages drops whole ones
	// (a partly cooled huge page leaves the resident set whole).
	m.CoolRange(2*mib+100, 2*mib-100) // from inside the page holding 2 MiB + 100
	if got := rss(); got < 5*mib || got > 6*mib {
		t.Fatalf("%d bytes resident after cooling 2 MiB of 8, want about 6 MiB", got)
	}
	m.CoolRange(-5, 10)       // clipped at the start
	m.CoolRange(size-10, 100) // clipped at the end
	m.CoolRange(size+10, 100) // outside: nothing
	touch()                   // reads back unchanged
	m.Cool()
	if got := rss(); got > 64<<10 {
		t.Fatalf("%d bytes resident after cooling the whole mapping", got)
	}
}
