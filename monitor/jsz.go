package monitor

import (
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"sort"
	"time"

	"github.com/jetwal/jetwal/jetstream"
	"github.com/jetwal/jetwal/jetstream/api"
)

// JSInfo is /jsz, in nats-server's field names and order.
type JSInfo struct {
	JetStreamStats
	ID              string           `json:"server_id"`
	Now             time.Time        `json:"now"`
	Disabled        bool             `json:"disabled,omitempty"`
	Config          JetStreamConfig  `json:"config,omitempty"`
	Streams         int              `json:"streams"`
	StreamsLeader   int              `json:"streams_leader,omitempty"`
	Consumers       int              `json:"consumers"`
	ConsumersLeader int              `json:"consumers_leader,omitempty"`
	Messages        uint64           `json:"messages"`
	Bytes           uint64           `json:"bytes"`
	Meta            *MetaClusterInfo `json:"meta_cluster,omitempty"`
	AccountDetails  []*AccountDetail `json:"account_details,omitempty"`
	Total           int              `json:"total"`
}

// MetaClusterInfo is /jsz's meta_cluster: clustered JetStream's meta
// group, in nats-server's field names.
type MetaClusterInfo struct {
	Name     string          `json:"name,omitempty"`
	Leader   string          `json:"leader,omitempty"`
	Peer     string          `json:"peer,omitempty"`
	Replicas []*api.PeerInfo `json:"replicas,omitempty"`
	Size     int             `json:"cluster_size"`
	Pending  int             `json:"pending"`
}

// AccountDetail is one account of /jsz's account_details.
type AccountDetail struct {
	Name string `json:"name"`
	ID   string `json:"id"`
	JetStreamStats
	Streams []StreamDetail `json:"stream_detail,omitempty"`
}

// StreamDetail is one stream of an account's stream_detail.
type StreamDetail struct {
	Name     string                  `json:"name"`
	Created  time.Time               `json:"created"`
	Cluster  *api.ClusterInfo        `json:"cluster,omitempty"`
	Config   *api.StreamConfig       `json:"config,omitempty"`
	State    api.StreamState         `json:"state,omitempty"`
	Consumer []*api.ConsumerInfo     `json:"consumer_detail,omitempty"`
	Mirror   *api.StreamSourceInfo   `json:"mirror,omitempty"`
	Sources  []*api.StreamSourceInfo `json:"sources,omitempty"`
}

// JszOptions are /jsz's query parameters and the options of a
// $SYS.REQ.SERVER.*.JSZ request, in nats-server's JSON names. jetwal has
// no direct (internal sourcing) consumers, and streams have no raft group
// names to show, so direct_consumer adds nothing and raft adds only the
// leader counts.
type JszOptions struct {
	Account          string `json:"account,omitempty"`
	Accounts         bool   `json:"accounts,omitempty"`
	Streams          bool   `json:"streams,omitempty"`
	Consumer         bool   `json:"consumer,omitempty"`
	DirectConsumer   bool   `json:"direct_consumer,omitempty"`
	Config           bool   `json:"config,omitempty"`
	LeaderOnly       bool   `json:"leader_only,omitempty"`
	Offset           int    `json:"offset,omitempty"`
	Limit            int    `json:"limit,omitempty"`
	RaftGroups       bool   `json:"raft,omitempty"`
	StreamLeaderOnly bool   `json:"stream_leader_only,omitempty"`
}

// DefaultJszLimit is nats-server's default number of accounts listed.
const DefaultJszLimit = 1024

// ErrNotLeader is Jsz's answer to leader_only on a server that is not the
// JetStream meta leader: over NATS such a server stays silent.
var ErrNotLeader = errors.New("not leader")

func (m *Monitor) jsz(w http.ResponseWriter, r *http.Request) {
	var o JszOptions
	bools := []struct {
		name string
		v    *bool
	}{
		{"accounts", &o.Accounts}, {"streams", &o.Streams}, {"consumers", &o.Consumer},
		{"direct-consumers", &o.DirectConsumer}, {"config", &o.Config}, {"leader-only", &o.LeaderOnly},
		{"raft", &o.RaftGroups}, {"stream-leader-only", &o.StreamLeaderOnly},
	}
	var err error
	for _, b := range bools {
		if *b.v, err = queryBool(r, b.name); err != nil {
			badRequest(w, "%v", err)
			return
		}
	}
	if o.Offset, err = queryInt(r, "offset", 0); err != nil {
		badRequest(w, "%v", err)
		return
	}
	if o.Limit, err = queryInt(r, "limit", 0); err != nil {
		badRequest(w, "%v", err)
		return
	}
	o.Account = r.URL.Query().Get("acc")
	info, err := m.Jsz(o)
	if err != nil {
		badRequest(w, "%v", err)
		return
	}
	writeJSON(w, http.StatusOK, info)
}

// Jsz returns the /jsz document for o, or ErrNotLeader when o asks for the
// meta leader only and this server is not it.
func (m *Monitor) Jsz(o JszOptions) (*JSInfo, error) {
	o.Offset = max(o.Offset, 0)
	if o.Limit <= 0 {
		o.Limit = DefaultJszLimit
	}
	if o.Consumer {
		o.Streams = true
	}
	if o.Streams && o.Account == "" {
		o.Accounts = true
	}
	info := &JSInfo{ID: m.opts.Server.ID(), Now: time.Now().UTC()}
	js := m.opts.JetStream
	if js == nil {
		if o.LeaderOnly {
			return nil, ErrNotLeader
		}
		info.Disabled = true
		return info, nil
	}
	s := js.Stats()
	if o.LeaderOnly && s.Meta != nil && s.Meta.Leader != m.opts.Server.Name() {
		return nil, ErrNotLeader
	}
	accs := js.AccountDetails(jetstream.DetailOptions{Streams: o.Streams, Consumers: o.Consumer})
	info.JetStreamStats = jsStats(s, len(accs))
	info.Config = jsConfig(s)
	info.Streams, info.Consumers, info.Messages, info.Bytes = s.Streams, s.Consumers, s.Messages, s.Bytes
	if o.RaftGroups {
		// Every stream object on a jetwal server is led by it: a
		// replicated stream exists only on its group's leader.
		info.StreamsLeader, info.ConsumersLeader = s.Streams, s.Consumers
	}
	if mc := s.Meta; mc != nil {
		info.Meta = &MetaClusterInfo{Name: mc.Cluster, Leader: mc.Leader, Replicas: mc.Replicas, Size: mc.Size}
	}
	info.Total = len(accs)
	sort.Slice(accs, func(i, j int) bool { return accs[i].Account < accs[j].Account })
	var picked []jetstream.AccountDetail
	for _, a := range accs {
		if a.Account == o.Account {
			picked = []jetstream.AccountDetail{a}
		}
	}
	if picked == nil && o.Accounts {
		picked = accs[min(o.Offset, len(accs)):]
		picked = picked[:min(o.Limit, len(picked))]
	}
	for _, a := range picked {
		info.AccountDetails = append(info.AccountDetails, accountDetail(&a, o, m.opts.Server.Name()))
	}
	return info, nil
}

// JszAccount is the answer to $SYS.REQ.ACCOUNT.<account>.JSZ: the detail of
// one account, as nats-server's JszAccount.
func (m *Monitor) JszAccount(o JszOptions) (*AccountDetail, error) {
	js := m.opts.JetStream
	if js == nil {
		return nil, errors.New("jetstream not enabled")
	}
	if !m.hasAccount(o.Account) {
		return nil, fmt.Errorf("account %q not found", o.Account)
	}
	for _, a := range js.AccountDetails(jetstream.DetailOptions{Streams: o.Streams, Consumers: o.Consumer}) {
		if a.Account == o.Account {
			return accountDetail(&a, o, m.opts.Server.Name()), nil
		}
	}
	return nil, fmt.Errorf("account %q not jetstream enabled", o.Account)
}

// accountDetail converts a jetstream snapshot to /jsz's shape, keeping the
// configs only when o asks for them. server is this server's name (for
// stream_leader_only).
func accountDetail(a *jetstream.AccountDetail, o JszOptions, server string) *AccountDetail {
	d := &AccountDetail{
		Name: a.Account, ID: a.Account,
		JetStreamStats: JetStreamStats{
			Memory: a.Memory, Store: a.Store,
			// nats-server shows the account's limits here, "none" (-1)
			// as an unsigned number.
			ReservedMemory: uint64(a.MaxMemory), ReservedStore: uint64(a.MaxStore),
			API: JetStreamAPIStats{Total: a.APITotal, Errors: a.APIErrors},
		},
	}
	for i := range a.Streams {
		s := &a.Streams[i]
		if o.StreamLeaderOnly && s.Cluster != nil && s.Cluster.Leader != server {
			continue
		}
		sd := StreamDetail{Name: s.Name, Created: s.Created, Cluster: s.Cluster, State: s.State, Mirror: s.Mirror, Sources: s.Sources}
		if o.Config {
			cfg := s.Config
			sd.Config = &cfg
		}
		for _, c := range s.Consumers {
			if !o.Config {
				cc := *c
				cc.Config = nil
				c = &cc
			}
			sd.Consumer = append(sd.Consumer, c)
		}
		d.Streams = append(d.Streams, sd)
	}
	return d
}

func jsConfig(s jetstream.Stats) JetStreamConfig {
	// nats-server reports the limits in force; jetwal's "no limit" is -1
	// there as in $JS.API.INFO.
	c := JetStreamConfig{MaxMemory: -1, MaxStore: -1, SyncInterval: s.SyncInterval, SyncAlways: s.SyncAlways, Domain: s.Domain}
	if s.StoreDir != "" {
		// The directory that holds the accounts, as nats-server shows it.
		c.StoreDir = filepath.Join(s.StoreDir, "jetstream")
	}
	if s.MaxMemory > 0 {
		c.MaxMemory = s.MaxMemory
	}
	if s.MaxStore > 0 {
		c.MaxStore = s.MaxStore
	}
	return c
}

// jsStats is the JetStream usage of the server; accounts is the number of
// accounts with JetStream (one JetStream each, so one AccountDetail each).
func jsStats(s jetstream.Stats, accounts int) JetStreamStats {
	// jetwal reserves nothing for accounts (no account limits), so the
	// reservations are 0 as in nats-server without account limits.
	return JetStreamStats{Memory: s.Memory, Store: s.Store, Accounts: accounts,
		API: JetStreamAPIStats{Level: s.APILevel, Total: s.APITotal, Errors: s.APIErrors}}
}
