// Package storetest is the conformance suite every store.StreamStore runs.
//
// An implementation's tests call Run with a function that opens a fresh,
// empty store:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T, l store.Limits) store.StreamStore {
//			s, err := memstore.New(l)
//			if err != nil {
//				t.Fatal(err)
//			}
//			return s
//		})
//	}
//
// A store that persists also calls RunPersistent with a function that opens
// (creating if needed) the store kept in a directory; its tests close a
// store, reopen it in the same directory and require identical state and
// messages. RunPersistent does not run Run's tests: call both, passing Run a
// function that opens in a fresh t.TempDir().
//
// The suite closes every store it opens (in t.Cleanup, and sometimes earlier
// on purpose); a second Close must return nil or store.ErrClosed, never
// another error. An open function may register its own cleanup on t.
//
// # Semantics the suite pins down
//
// store.go leaves some behaviour open; the suite requires the following,
// which follows nats-server's memstore where the contract is silent:
//
//   - A fresh store reports FirstSeq 0 and LastSeq 0. An emptied store
//     reports FirstSeq = LastSeq+1. Whenever messages are held, FirstSeq is
//     the sequence of the oldest one.
//   - LastSeq is the last sequence handed out and the next Append gets
//     LastSeq+1: Delete of the newest message, Purge, Truncate and MaxAge
//     expiry never lower it. Truncate(seq) therefore leaves LastSeq alone
//     and the removed sequences count as deleted (NumDeleted, Deleted).
//   - Compact(seq) that empties the store sets FirstSeq = max(seq,
//     LastSeq+1) and LastSeq = FirstSeq-1; Compact(0) returns
//     store.ErrInvalidSequence.
//   - Purge(filter, upTo, keep) keeps the newest keep of the messages that
//     match filter and lie below upTo, across all matching subjects; it never
//     changes LastSeq, also when upTo lies past the end.
//   - LoadPrev returns store.ErrEOF when no message qualifies (LoadLast
//     returns store.ErrNotFound, as documented); Load of a sequence never
//     stored, including 0 and sequences past LastSeq, returns ErrNotFound.
//   - A message subject is any valid subject; a wildcard token in it is an
//     ordinary character ("orders.*" is stored as such, matched by the
//     filters "orders.*" and "orders.>", not by "orders.new"). Empty tokens
//     and whitespace are store.ErrInvalidSubject.
//   - An invalid filter makes the Load functions and Purge return
//     store.ErrInvalidSubject; SubjectsState and NumPending treat it as
//     matching nothing.
//   - MaxMsgSize bounds len(hdr)+len(data). MaxBytes is reached exactly (a
//     store may hold precisely MaxBytes bytes), bytes being counted as the
//     store says (store.Sizer; store.MemRecordSize when it does not say).
//     A message whose size alone exceeds MaxBytes is refused with ErrMaxBytes
//     under either discard policy. Under DiscardNew a message to a subject at
//     MaxMsgsPerSubject replaces that subject's oldest message and so does
//     not count against MaxMsgs (bytes are checked net of the replaced
//     message); with DiscardNewPerSubject it is refused instead.
//     DiscardNewPerSubject has no effect under DiscardOld. A refused append
//     consumes no sequence.
//   - UpdateLimits drops the oldest messages the new limits no longer allow,
//     whatever the discard policy.
//   - Message times never decrease with sequence.
//   - After Close every method that returns an error returns ErrClosed.
//
// # Helpers
//
// CheckConsistent, ReadAll and AssertSameContents are exported for an
// implementation's own tests, and NewModel is a deliberately naive store
// with the semantics above, usable as an oracle in crash tests.
package storetest
