package cluster

import (
	"encoding/json"
	"slices"

	"github.com/hashicorp/raft"
)

// RemoveServer takes a server out of the meta group, as an operator does
// for a server that is gone for good (nats-server's SERVER.REMOVE). The
// server is named by its raft id (id, when given) or by its server name,
// as it announced it in the meta map (nodeinfo.go: a server that is down
// has no route to tell its name). It returns the removed server's raft
// id, "" when no member matches. It fails with ErrNotMetaLeader on any
// other server than the meta leader.
func (n *Node) RemoveServer(name, id string) (string, error) {
	m := n.metaGroup()
	if m == nil {
		return "", ErrClosed
	}
	if m.g.r.State() != raft.Leader {
		return "", ErrNotMetaLeader
	}
	found := n.FindServer(name, id)
	if found == "" {
		return "", nil
	}
	if err := m.g.r.RemoveServer(raft.ServerID(found), 0, ProposeTimeout).Error(); err != nil {
		return "", err
	}
	n.log.Info("JetStream cluster: server removed from the meta group", "peer", found, "name", name)
	return found, nil
}

// FindServer returns the raft id of the meta group's member named by its
// raft id (id, when given) or by its server name (as it announced it in
// the meta map, or as its route tells it), "" when none matches.
func (n *Node) FindServer(name, id string) string {
	found := ""
	for _, p := range n.Peers() {
		if id != "" {
			if p == id {
				found = p
			}
			continue
		}
		if name != "" && (n.announcedName(p) == name || n.NameOf(p) == name) {
			found = p
		}
	}
	return found
}

// announcedName is the name peer announced in the meta map, "" when none.
func (n *Node) announcedName(peer string) string {
	b, ok := n.Get(nodePrefix + peer)
	if !ok {
		return ""
	}
	var ni nodeInfo
	if json.Unmarshal(b, &ni) != nil {
		return ""
	}
	return ni.Name
}

// Peers returns the meta group's members: the voters of its latest
// configuration (every server of --routes until one is removed).
func (n *Node) Peers() []string {
	if m := n.metaGroup(); m != nil {
		if f := m.g.r.GetConfiguration(); f.Error() == nil {
			var out []string
			for _, s := range f.Configuration().Servers {
				if s.Suffrage == raft.Voter {
					out = append(out, string(s.ID))
				}
			}
			if len(out) > 0 {
				slices.Sort(out)
				return out
			}
		}
	}
	return slices.Clone(n.opts.Peers)
}
