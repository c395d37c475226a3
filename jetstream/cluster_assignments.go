package jetstream

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
)

// Decoded stream assignments. Creating a stream scans every assignment
// three times or more (the subject overlap check, the account limits,
// placement's load count), and the usage measure and listings scan them
// too. Decoding one costs about 6 µs and 1.5 KiB of garbage, so with
// 1,000 streams a create spent some 20 ms decoding what had not changed.
// The cache keeps each assignment decoded with the bytes it came from:
// an entry is used only while the meta map still holds exactly those
// bytes, so it is never stale; what changed is decoded again.

// assignmentCache maps a stream's name to its decoded assignment.
type assignmentCache struct {
	mu sync.Mutex
	m  map[string]cachedAssignment
}

type cachedAssignment struct {
	raw []byte
	a   streamAssignment
}

// assignments returns every stream assignment of the meta map, in name
// order. They share their slices with the cache: callers read them and
// copy before changing anything (withPeers does).
func (js *JetStream) assignments() []streamAssignment {
	keys := js.cl.c.Keys(streamKeyPrefix)
	out := make([]streamAssignment, 0, len(keys))
	c := &js.cl.asgs
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[string]cachedAssignment, len(keys))
	}
	for _, k := range keys {
		name := strings.TrimPrefix(k, streamKeyPrefix)
		b, ok := js.cl.c.Get(k)
		if !ok {
			continue // deleted since Keys
		}
		if e, ok := c.m[name]; ok && bytes.Equal(e.raw, b) {
			out = append(out, e.a)
			continue
		}
		var a streamAssignment
		if json.Unmarshal(b, &a) != nil {
			delete(c.m, name)
			continue
		}
		c.m[name] = cachedAssignment{raw: bytes.Clone(b), a: a}
		out = append(out, a)
	}
	if len(c.m) > len(out) {
		// Streams deleted since the last scan.
		listed := make(map[string]bool, len(out))
		for _, a := range out {
			listed[a.Config.Name] = true
		}
		for name := range c.m {
			if !listed[name] {
				delete(c.m, name)
			}
		}
	}
	return out
}
