package cluster

import (
	"bytes"
	"testing"
)

// TestMetaEntries: puts and deletes round-trip; malformed entries are
// refused, never applied.
func TestMetaEntries(t *testing.T) {
	for _, c := range []struct {
		key string
		val []byte
		del bool
	}{{"streams/ORDERS", []byte(`{"config":{}}`), false}, {"consumers/ORDERS/C", nil, true}, {"k", []byte{}, false}} {
		key, val, del, err := decodeMeta(encodeMeta(c.key, c.val, c.del))
		if err != nil || key != c.key || del != c.del || !bytes.Equal(val, c.val) {
			t.Errorf("%q: got %q %q %v %v", c.key, key, val, del, err)
		}
	}
	for _, b := range [][]byte{nil, {1}, {3, 1, 'k'}, {1, 5, 'k'}, {1, 0x80}} {
		if _, _, _, err := decodeMeta(b); err == nil {
			t.Errorf("%v accepted", b)
		}
	}
}

// TestGroupNames: every stream name gives a group name the raft preamble
// can carry, distinct for distinct streams.
func TestGroupNames(t *testing.T) {
	long := string(bytes.Repeat([]byte("x"), 250))
	seen := map[string]string{}
	for _, s := range []string{"ORDERS", "a b", long, long + "y", "ü"} {
		g := groupName(s)
		if other, dup := seen[g]; dup {
			t.Errorf("%q and %q share group %q", s, other, g)
		}
		seen[g] = s
		for i := 0; i < len(g); i++ {
			if g[i] <= ' ' || g[i] > '~' {
				t.Errorf("group %q of %q has byte %q", g, s, g[i])
			}
		}
	}
}
