package wal

import (
	"fmt"
	"testing"

	"github.com/jetwal/jetwal/store/storetest"
)

// TestFilteredPurge: purges by subject filter, below a sequence and
// keeping the newest matches, on more than pruneChunk messages, end where
// the same purge on the in-memory store ends, and again after a restart.
// The filters are a literal, a narrow wildcard (3 subjects: the index
// merges their lists) and a wide one (97 subjects: it reads subjects from
// the records); the keeps are counted from the index and cut at the right
// match (keepMatchCutLocked), the unfiltered one with keep above
// pruneChunk too (the survivors are too many to rebuild from). In the
// "appends" cases messages matching the filter are appended while the
// purge yields the lock: they land above its limit and stay, and the
// newest matches it keeps are those of when it began.
func TestFilteredPurge(t *testing.T) {
	const n = 2*pruneChunk + 3000 // more than pruneChunk removed with keep > pruneChunk
	subj := func(i int) string {
		switch i % 8 {
		case 0:
			return fmt.Sprintf("x.%d", i%3)
		case 1:
			return "l"
		}
		return fmt.Sprintf("w.%d", i%97)
	}
	for _, c := range []struct {
		name         string
		filter       string
		upTo, keep   uint64
		appendDuring bool
	}{
		{name: "literal-keep", filter: "l", keep: 3},
		{name: "literal-below", filter: "w.5", upTo: n / 3},
		{name: "narrow-below-keep", filter: "x.*", upTo: n - 1000, keep: 7},
		{name: "wide-keep", filter: "w.*", keep: 10},
		{name: "wide-below", filter: "w.*", upTo: n / 2},
		{name: "wide-keep-appends", filter: "w.*", keep: 10, appendDuring: true},
		{name: "all-keep-above-chunk-appends", filter: ">", keep: pruneChunk + 5, appendDuring: true},
		{name: "keep-more-than-match", filter: "x.2", keep: n},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := Open(dir, Options{Sync: SyncNever})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { s.Close() }()
			ref := newRef(t)
			data := make([]byte, 8)
			for i := 0; i < n; i++ {
				if err := s.AppendAsync(subj(i), nil, data, nil); err != nil {
					t.Fatal(err)
				}
				if _, _, err := ref.Append(subj(i), nil, data); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Sync(); err != nil {
				t.Fatal(err)
			}
			for q := uint64(50); q <= n; q += 101 {
				if err := s.Delete(q, false); err != nil {
					t.Fatal(err)
				}
				if err := ref.Delete(q, false); err != nil {
					t.Fatal(err)
				}
			}
			during := "w.late" // matches the filter, "w.*" or ">"
			late := 0
			if c.appendDuring {
				s.testYield = func() {
					if _, _, err := s.Append(during, nil, []byte("during")); err != nil {
						t.Errorf("append during the purge: %v", err)
					}
					late++
				}
			}
			got, err := s.Purge(c.filter, c.upTo, c.keep)
			if err != nil {
				t.Fatal(err)
			}
			s.testYield = nil
			if c.appendDuring && late == 0 {
				t.Fatalf("the purge of %d messages never yielded", got)
			}
			want, err := ref.Purge(c.filter, c.upTo, c.keep)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("Purge(%q, %d, %d) removed %d, the in-memory store %d", c.filter, c.upTo, c.keep, got, want)
			}
			for range late {
				if _, _, err := ref.Append(during, nil, []byte("during")); err != nil {
					t.Fatal(err)
				}
			}
			sameAs(t, s, ref, n+late)
			storetest.CheckConsistent(t, s)
			reopenSameAs(t, &s, dir, Options{Sync: SyncNever}, ref, n+late)
		})
	}
}

// BenchmarkPurgeSubject purges one of two interleaved subjects from a
// stream of 256k messages, keeping its newest 100: the purge walks the
// subject's list (no list of its sequences is built) and removes every
// other message (benchPurge). B/op is what the purge allocates,
// tombstones included.
func BenchmarkPurgeSubject(b *testing.B) { benchPurge(b, 2, "purge.1", 100) }
