// Package vfs is the filesystem seam under jetwal's storage packages.
//
// Every file the engine touches (segments, index checkpoints, consumer state,
// stream metadata) goes through the FS interface, so tests can swap the real
// operating system for:
//
//   - MemFS: an in-memory filesystem that can crash. A crash keeps only the
//     bytes a File.Sync made durable, and only the directory entries (creates,
//     renames, removes) that a SyncDir on their parent made durable. This is
//     the model behind every crash test in jetwal.
//   - ErrorFS: a wrapper around any FS that injects faults on chosen
//     operations: ENOSPC, EIO, short writes, failed fsync.
//
// The OS implementation (Default) maps each call onto the matching system call
// through golang.org/x/sys/unix where the standard library has no equivalent
// (fdatasync, fallocate, flock).
//
// Memory mapping is part of the seam: File.Map returns the bytes of a file
// region. On the OS this is a real mmap (github.com/edsrzf/mmap-go); on MemFS it
// is a view of the in-memory contents. Callers must treat mapped bytes as
// read-only and must not use them after Unmap.
package vfs
