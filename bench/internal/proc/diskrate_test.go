package proc

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMeasureDiskWrite checks that the measurement writes across a file
// boundary, reports a rate, and leaves nothing behind; and that bad input
// is an error.
func TestMeasureDiskWrite(t *testing.T) {
	dir := t.TempDir()
	rate, err := MeasureDiskWrite(dir, DiskFileSize+DiskWriteSize+123)
	if err != nil {
		t.Fatal(err)
	}
	if rate <= 0 {
		t.Fatalf("rate %v MiB/s", rate)
	}
	left, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Fatalf("%d entries left in %s, first %s", len(left), dir, left[0].Name())
	}
	if _, err := MeasureDiskWrite(dir, 0); err == nil {
		t.Fatal("total 0: no error")
	}
	if _, err := MeasureDiskWrite(filepath.Join(dir, "missing"), 1<<20); err == nil {
		t.Fatal("missing directory: no error")
	}
}
