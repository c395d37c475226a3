package serve

import (
	"encoding/hex"
	"strings"
	"sync"
	"time"

	"github.com/jetwal/jetwal/cluster"
	"github.com/jetwal/jetwal/jetstream"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/wal"
)

// Clustered JetStream in several accounts. One cluster node (one meta
// group, one raft group per replicated stream) serves every account with
// JetStream; each account's JetStream gets a jsCluster that keeps it in a
// namespace of its own:
//
//   - meta keys: $G's are unprefixed (as they were when $G was the only
//     clustered account, so existing clusters keep their state); another
//     account's are "acc/<hex of its name>/<key>", and the meta group's
//     changes are dispatched to the account owning the key (metaRouter);
//   - replicated streams: $G's replica is named by the stream, another
//     account's "<account>/<stream>" (a stream name holds no '/'), so two
//     accounts' streams of one name are two raft groups, two directories;
//   - the servers' requests to each other (cluster_state.go's states) carry
//     the account's hex name in their subject.
//
// Nothing of this is reachable from a client: the meta map, the raft
// groups and the requests all live below the accounts (the internal
// account, the route port).

// accountKeyPrefix is the meta key prefix of account acc ("" for $G).
func accountKeyPrefix(acc string) string {
	if acc == server.GlobalAccount {
		return ""
	}
	return "acc/" + hex.EncodeToString([]byte(acc)) + "/"
}

// replicaName is the cluster replica of account acc's stream.
func replicaName(acc, stream string) string {
	if acc == server.GlobalAccount {
		return stream
	}
	return acc + "/" + stream
}

// splitReplicaName is replicaName's inverse.
func splitReplicaName(name string) (acc, stream string) {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		return name[:i], name[i+1:]
	}
	return server.GlobalAccount, name
}

// metaRouter hands each committed change of the meta map to the JetStream
// of the account whose key it is. It starts the node itself, before any
// JetStream exists: an account's JetStream that joins later (register)
// is given the account's current keys first, under mu, so that it misses
// no change and sees each in order.
type metaRouter struct {
	node *cluster.Node

	mu   sync.Mutex // serialises dispatching and registering
	accs map[string]metaSink
}

type metaSink struct {
	put func(string, []byte)
	del func(string)
}

func newMetaRouter(node *cluster.Node, srv *server.Server) (*metaRouter, error) {
	m := &metaRouter{node: node, accs: map[string]metaSink{}}
	if err := node.Start(srv, m.put, m.del); err != nil {
		return nil, err
	}
	return m, nil
}

// owner finds the sink of key and the key without its account prefix.
// Keys not in an account's namespace ($G's, the cluster's fences) go to
// $G, which ignores what it does not know.
func (m *metaRouter) owner(key string) (metaSink, string, bool) {
	if rest, ok := strings.CutPrefix(key, "acc/"); ok {
		h, k, ok := strings.Cut(rest, "/")
		if !ok {
			return metaSink{}, "", false
		}
		name, err := hex.DecodeString(h)
		if err != nil {
			return metaSink{}, "", false
		}
		s, ok := m.accs[string(name)]
		return s, k, ok
	}
	s, ok := m.accs[server.GlobalAccount]
	return s, key, ok
}

func (m *metaRouter) put(key string, val []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, k, ok := m.owner(key); ok {
		s.put(k, val)
	}
}

func (m *metaRouter) del(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, k, ok := m.owner(key); ok {
		s.del(k)
	}
}

// register joins account acc's JetStream: it receives the account's keys
// now, then every change.
func (m *metaRouter) register(acc string, put func(string, []byte), del func(string)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.accs[acc] = metaSink{put: put, del: del}
	prefix := accountKeyPrefix(acc)
	for _, k := range m.node.Keys(prefix) {
		if acc == server.GlobalAccount && strings.HasPrefix(k, "acc/") {
			continue
		}
		if v, ok := m.node.Get(k); ok {
			put(strings.TrimPrefix(k, prefix), v)
		}
	}
}

// jsCluster adapts the cluster node to one account's jetstream.Cluster.
type jsCluster struct {
	*cluster.Node
	srv     *server.Server
	router  *metaRouter
	account string
}

func (c jsCluster) Name() string { return c.srv.ClusterName() }

func (c jsCluster) Start(put func(string, []byte), del func(string)) error {
	c.router.register(c.account, put, del)
	return nil
}

func (c jsCluster) key(k string) string { return accountKeyPrefix(c.account) + k }

func (c jsCluster) Put(key string, val []byte) error { return c.Node.Put(c.key(key), val) }
func (c jsCluster) Delete(key string) error          { return c.Node.Delete(c.key(key)) }
func (c jsCluster) PutIf(key string, old, val []byte) error {
	return c.Node.PutIf(c.key(key), old, val)
}
func (c jsCluster) Get(key string) ([]byte, bool) { return c.Node.Get(c.key(key)) }

func (c jsCluster) Keys(prefix string) []string {
	p := accountKeyPrefix(c.account)
	keys := c.Node.Keys(p + prefix)
	out := keys[:0]
	for _, k := range keys {
		if p == "" && strings.HasPrefix(k, "acc/") {
			continue // another account's (only when prefix is "")
		}
		out = append(out, strings.TrimPrefix(k, p))
	}
	return out
}

func (c jsCluster) subject(s string) string {
	return hex.EncodeToString([]byte(c.account)) + "." + s
}

func (c jsCluster) Answer(subject string, fn func(string, []byte) []byte) (func(), error) {
	p := c.subject("")
	return c.Node.Answer(c.subject(subject), func(subj string, data []byte) []byte {
		return fn(strings.TrimPrefix(subj, p), data)
	})
}

func (c jsCluster) Gather(subject string, data []byte, wait time.Duration, fn func([]byte) bool) error {
	return c.Node.Gather(c.subject(subject), data, wait, fn)
}

func (c jsCluster) OpenStream(name string, peers []string, join, campaign bool, opts wal.Options, onLeader func(bool)) (jetstream.Replica, error) {
	r, err := c.Node.OpenStream(replicaName(c.account, name), peers, join, campaign, opts, onLeader)
	if err != nil {
		return nil, err
	}
	return jsReplica{Replica: r, prefix: accountKeyPrefix(c.account)}, nil
}

// StreamDirs lists the streams of this account this server holds replica
// data of (cluster_stale.go in jetstream).
func (c jsCluster) StreamDirs() ([]string, error) {
	names, err := c.Node.StreamDirs()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		if acc, stream := splitReplicaName(n); acc == c.account {
			out = append(out, stream)
		}
	}
	return out, nil
}

// RemoveStreamData deletes the replica data of this account's stream name.
func (c jsCluster) RemoveStreamData(name string) error {
	return c.Node.RemoveStreamData(replicaName(c.account, name))
}
