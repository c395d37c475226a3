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
//
// # The crash model
//
// MemFS keeps, per file, current and durable bytes, and per directory, a
// current and a durable table of name -> inode. After a crash
// (MemFS.CrashClone) a file is present only if every directory on its path
// was SyncDir'ed after the entry appeared, and it holds exactly the bytes of
// its last File.Sync. So the engine's rules are the ones a real disk needs:
//
//   - After creating, renaming or removing a file, SyncDir its directory
//     before relying on the change. After MkdirAll, SyncDir each parent that
//     gained an entry.
//   - Write a file's bytes and Sync them before the rename that publishes it.
//   - A rename between two directories becomes durable in halves, one per
//     SyncDir; a crash in between can leave the file under both names.
//
// MemFS.CrashCloneTorn additionally keeps a seeded random prefix of each
// file's unsynced appended bytes, which is what a torn tail looks like.
// Unsynced overwrites inside the synced length are always lost.
//
// # Fault injection
//
// ErrorFS.Inject takes a Fault: an Op, a path substring, how many matching
// calls succeed first (After), how many then fail (Times, 0 for every one),
// and the error (wrapped in *os.PathError, so errors.Is(err,
// syscall.ENOSPC) holds). A failed call does not reach the inner FS, except
// that a Short write writes the first half of its bytes, and Close always
// closes the inner file.
package vfs
