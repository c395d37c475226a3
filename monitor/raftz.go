package monitor

import (
	"net/http"
)

// /raftz and $SYS.REQ.SERVER.PING.RAFTZ: the raft groups of clustered
// JetStream on this server, in nats-server's shape, an object of accounts,
// each an object of groups by name. As nats-server, the meta group is in
// the system account and a stream's group in the stream's account ($G in
// jetwal), and without an account filter only the system account's groups
// are shown (?acc=$G lists the streams' groups). Only what jetwal keeps is
// reported: hashicorp/raft's state, term, log, commit and applied indexes,
// leader and configuration, and, on a stream's leader, what each follower
// last reported having applied and when. The fields nats-server fills from
// its own raft (votes, proposal queues, the traffic account, overrun and
// catch-up flags) are left out.

// RaftGroups is where the monitor reads the raft groups from (package
// serve adapts the cluster node); nil = not clustered.
type RaftGroups interface {
	RaftGroups() []RaftGroup
}

// RaftGroup is one group and the account it belongs to.
type RaftGroup struct {
	Account string
	Name    string
	Info    RaftzGroup
}

// RaftzGroup is one group in /raftz.
type RaftzGroup struct {
	// ID is this server's id in the group (its route address).
	ID           string `json:"id"`
	State        string `json:"state"` // LEADER, FOLLOWER, CANDIDATE, CLOSED
	Size         int    `json:"size"`
	QuorumNeeded int    `json:"quorum_needed"`
	Committed    uint64 `json:"committed"`
	Applied      uint64 `json:"applied"`
	// Leader is the leader's id, LeaderName its server name (jetwal's).
	Leader     string `json:"leader,omitempty"`
	LeaderName string `json:"leader_name,omitempty"`
	Term       uint64 `json:"term"`
	// PTerm and PIndex are the term and index of the last entry of the
	// log.
	PTerm     uint64 `json:"pterm"`
	PIndex    uint64 `json:"pindex"`
	SystemAcc bool   `json:"system_account"`
	// WAL is the raft log: its first and last index (first 0 when the
	// log is empty, everything in the snapshot).
	WAL RaftzWAL `json:"wal"`
	// Snapshot is the index and term of the last snapshot (jetwal's).
	Snapshot *RaftzSnapshot `json:"snapshot,omitempty"`
	// LastContact is how long ago a follower last heard from its leader
	// (jetwal's; absent on the leader).
	LastContact string `json:"last_contact,omitempty"`
	// Stream names the stream of a stream's group (jetwal's).
	Stream string                    `json:"stream,omitempty"`
	Peers  map[string]RaftzGroupPeer `json:"peers"`
}

// RaftzWAL is the extent of a group's raft log.
type RaftzWAL struct {
	Messages uint64 `json:"messages"`
	FirstSeq uint64 `json:"first_seq"`
	LastSeq  uint64 `json:"last_seq"`
}

// RaftzSnapshot is a group's last snapshot.
type RaftzSnapshot struct {
	Index uint64 `json:"index"`
	Term  uint64 `json:"term"`
}

// RaftzGroupPeer is another member of a group.
type RaftzGroupPeer struct {
	Name  string `json:"name"`
	Known bool   `json:"known"`
	// AppliedIndex is the last index the member reported having applied
	// (jetwal's: a stream's followers report to its leader; nats-server's
	// last_replicated_index counts what the leader sent, which
	// hashicorp/raft does not tell).
	AppliedIndex uint64 `json:"applied_index,omitempty"`
	LastSeen     string `json:"last_seen,omitempty"`
}

// RaftzStatus is the /raftz document: account → group name → group.
type RaftzStatus map[string]map[string]RaftzGroup

// RaftzOptions filter /raftz (query acc and group; the request body's
// account and group).
type RaftzOptions struct {
	AccountFilter string `json:"account"`
	GroupFilter   string `json:"group"`
}

// Raftz returns the groups o selects; ok is false on a server without raft
// groups (not clustered).
func (m *Monitor) Raftz(o RaftzOptions) (st RaftzStatus, ok bool) {
	if m.opts.Raft == nil {
		return nil, false
	}
	acc := o.AccountFilter
	if acc == "" {
		acc = m.accounts().SystemAccount()
	}
	st = RaftzStatus{}
	for _, g := range m.opts.Raft.RaftGroups() {
		if g.Account != acc || o.GroupFilter != "" && g.Name != o.GroupFilter {
			continue
		}
		if st[g.Account] == nil {
			st[g.Account] = map[string]RaftzGroup{}
		}
		st[g.Account][g.Name] = g.Info
	}
	return st, true
}

func (m *Monitor) raftz(w http.ResponseWriter, r *http.Request) {
	st, ok := m.Raftz(RaftzOptions{AccountFilter: r.URL.Query().Get("acc"), GroupFilter: r.URL.Query().Get("group")})
	if !ok {
		// nats-server's words.
		http.Error(w, "No Raft nodes registered", http.StatusNotFound)
		return
	}
	writeJSON(w, http.StatusOK, st)
}
