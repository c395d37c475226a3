// Package memstore is the in-memory store.StreamStore behind JetStream
// streams with memory storage.
//
// # Layout
//
// Messages live in a dense index by sequence: a deque of fixed-size blocks
// where slot i holds sequence base+i, base being the first sequence still
// held. A removed message leaves a tombstone (a slot with no subject) so the
// index stays dense; tombstones at either end are trimmed at once, so the
// first and the last slot always hold live messages. Blocks rather than one
// growing slice keep appends from copying the index and keep the garbage
// collector away from one huge array of pointers. Each live message owns a
// single allocation holding its header followed by its payload.
//
// Next to the index, a per-subject index maps each subject to the ascending
// list of its live sequences. That list answers a literal-filter LoadNext,
// LoadLast and LoadPrev with a binary search, keeps per-subject limits O(1),
// and gives SubjectsState and NumPending without scanning messages.
//
// Wildcard filters are served two ways. The set of subjects matching a
// filter is cached until a subject is created or removed; when it is cached
// and small, the store asks each of those subjects for its next (or
// previous) sequence directly. Otherwise a short linear scan from the start
// sequence runs first, since a match is usually close; if it finds nothing
// and there are fewer subjects than messages left to scan, the store builds
// the matching set (filling the cache) and asks the subjects instead, else
// it keeps scanning.
//
// # Durability and AppendAsync
//
// Memory is "durable" as soon as a message is stored, so AppendAsync calls
// done synchronously, on the caller's goroutine, before it returns. Calls to
// done for concurrent AppendAsync callers are still delivered one at a time
// in sequence order: a caller whose message got a later sequence waits until
// the done of every earlier AppendAsync has returned. A done callback may
// call any method of the store except AppendAsync (which would wait for the
// very callback that is running). Sync does nothing beyond checking that the
// store is open.
//
// # Limits
//
// MaxMsgs, MaxBytes and MaxMsgsPerSubject drop the oldest messages under
// DiscardOld. Under DiscardNew they refuse the new message with
// store.ErrMaxMsgs or store.ErrMaxBytes; a message to a subject already at
// MaxMsgsPerSubject replaces that subject's oldest message (so it does not
// count against MaxMsgs) unless DiscardNewPerSubject is set, in which case it
// is refused with store.ErrMaxMsgsPerSubj. MaxMsgSize bounds len(hdr)+len(data)
// and a message whose accounted size (store.MemRecordSize) alone exceeds MaxBytes
// is refused under either policy. MaxAge is enforced by a timer armed for the
// moment the oldest message expires; nothing is scanned on append. Limits
// failures never consume a sequence.
//
// # Sequences
//
// A fresh store reports FirstSeq 0 and LastSeq 0. LastSeq is always the last
// sequence handed out (or seq-1 after Compact(seq) past the end), so the next
// Append gets LastSeq+1; Delete, Purge, Truncate and expiry never lower it.
// Whenever the store holds messages FirstSeq is the sequence of the oldest
// one; when it becomes empty FirstSeq is LastSeq+1. SkipTo (a mirror over
// a gap in its origin) moves LastSeq ahead without messages; the skipped
// sequences count as deleted, and the next append fills the index with
// tombstones up to its sequence, so a skip over held messages is bounded.
//
// # Locking
//
// One sync.RWMutex (Store.mu) guards all messages, indexes and counters:
// loads and state queries take it shared, everything that changes the store
// takes it exclusively. The filter cache has its own mutex, taken while
// Store.mu is held (shared or exclusive). The AppendAsync delivery turn has
// its own mutex and condition variable, used only after Store.mu has been
// released, so a done callback runs with no store lock held. The MaxAge
// timer's callback takes Store.mu exclusively and does nothing once the
// store is closed.
package memstore
