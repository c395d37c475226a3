package vfs

import (
	"errors"
	"testing"
)

func TestReadFile(t *testing.T) {
	fs := NewMemFS()
	f, err := fs.Create("a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("hello"), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if b, err := ReadFile(fs, "a", 0); err != nil || string(b) != "hello" {
		t.Fatalf("unbounded: %q %v", b, err)
	}
	if b, err := ReadFile(fs, "a", 5); err != nil || string(b) != "hello" {
		t.Fatalf("at the bound: %q %v", b, err)
	}
	if _, err := ReadFile(fs, "a", 4); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over the bound: %v", err)
	}
	if _, err := ReadFile(fs, "missing", 0); err == nil {
		t.Fatal("a missing file read")
	}
}
