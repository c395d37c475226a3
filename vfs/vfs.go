package vfs

import (
	"errors"
	"io"
	"os"
)

// FS is the set of filesystem operations the storage engine needs.
// Paths are ordinary slash-separated OS paths.
type FS interface {
	// Create creates or truncates the named file for reading and writing.
	Create(name string) (File, error)
	// Open opens the named file read-only.
	Open(name string) (File, error)
	// OpenRW opens an existing file for reading and writing.
	OpenRW(name string) (File, error)
	// Remove removes the named file or empty directory.
	Remove(name string) error
	// RemoveAll removes a directory tree; a missing path is not an error.
	RemoveAll(name string) error
	// Rename renames oldname to newname, replacing newname atomically.
	Rename(oldname, newname string) error
	// MkdirAll creates a directory and its parents.
	MkdirAll(dir string, perm os.FileMode) error
	// ReadDir lists the names in a directory, sorted.
	ReadDir(dir string) ([]string, error)
	// Stat reports the size of a file and whether it is a directory.
	Stat(name string) (FileInfo, error)
	// SyncDir makes the directory's entries (creates, renames, removes) durable.
	SyncDir(dir string) error
	// Lock takes an exclusive advisory lock on the named file (created if
	// needed), held until the returned Closer is closed.
	Lock(name string) (io.Closer, error)
}

// FileInfo is the part of os.FileInfo the engine uses.
type FileInfo struct {
	Name  string
	Size  int64
	IsDir bool
}

// File is an open file.
type File interface {
	io.ReaderAt
	io.WriterAt
	io.Closer
	// Write appends at the file's current offset (used by simple writers).
	Write(p []byte) (int, error)
	// Sync makes the file's contents durable (fdatasync on Linux).
	Sync() error
	// Truncate changes the file's size.
	Truncate(size int64) error
	// Allocate reserves disk blocks for [off, off+length) so later writes in
	// that range cannot fail with ENOSPC. It returns ErrAllocUnsupported when
	// the filesystem cannot preallocate; callers then fall back to writing.
	Allocate(off, length int64) error
	// Size returns the current file size.
	Size() (int64, error)
	// Map maps length bytes of the file from offset 0 read-only. The returned
	// Mapping must be released with Unmap; its bytes are invalid afterwards.
	Map(length int) (Mapping, error)
	// Name is the path the file was opened with.
	Name() string
}

// Mapping is a read-only view of a file's bytes.
type Mapping interface {
	// Bytes returns the mapped bytes. For MemFS the slice reflects writes made
	// after the mapping was created, up to the mapped length.
	Bytes() []byte
	// Unmap releases the mapping.
	Unmap() error
	// Cool tells the OS the mapped pages are not needed soon: they leave
	// the process's resident set (the page cache keeps them, and the next
	// read faults them back in). It only affects memory, never contents.
	Cool()
	// CoolRange is Cool for the pages holding bytes [off, off+length) of
	// the mapping (whole pages: the page holding off is included; where
	// the OS maps the file with huge pages, a huge page the range touches
	// leaves whole). A range outside the mapping is clipped to it.
	CoolRange(off, length int)
}

// ErrAllocUnsupported is returned by File.Allocate when the filesystem does not
// support preallocation.
var ErrAllocUnsupported = errors.New("vfs: preallocation not supported")
