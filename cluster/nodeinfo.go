package cluster

import (
	"encoding/json"
	"errors"
	"slices"
	"time"
)

// What each server tells the others about itself: its server tags
// (server_tags), which the meta leader's stream placement matches.
// nats-server spreads them in its statsz events; here each server commits
// its own entry to the meta map, "_node/<raft id>", so that every server,
// and whichever becomes meta leader, reads the same tags (Node.Tags).
// The entry is written again whenever a server starts with other tags.

// nodePrefix is the meta map's prefix of servers' entries.
const nodePrefix = "_node/"

// nodeInfo is a server's entry.
type nodeInfo struct {
	Name string   `json:"name"`
	Tags []string `json:"tags,omitempty"`
}

// announce commits this server's entry once the meta group has a leader,
// retrying until it is committed or the node closes.
func (m *meta) announce() {
	want := nodeInfo{Name: m.n.opts.Name, Tags: m.n.opts.Tags}
	val, err := json.Marshal(want)
	if err != nil {
		return
	}
	for {
		m.mu.RLock()
		cur, ok := m.kv[nodePrefix+m.n.opts.Self]
		m.mu.RUnlock()
		if ok && string(cur) == string(val) {
			return
		}
		_, err := m.propose(encodeMeta(nodePrefix+m.n.opts.Self, val, false), nil)
		if err == nil {
			return
		}
		if errors.Is(err, ErrClosed) {
			return
		}
		select {
		case <-m.done:
			return
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Tags returns the server tags of peer (a raft id) as it last announced
// them; nil when it has none or has not announced itself yet.
func (n *Node) Tags(peer string) []string {
	if peer == n.opts.Self {
		return slices.Clone(n.opts.Tags)
	}
	b, ok := n.Get(nodePrefix + peer)
	if !ok {
		return nil
	}
	var ni nodeInfo
	if json.Unmarshal(b, &ni) != nil {
		return nil
	}
	return ni.Tags
}
