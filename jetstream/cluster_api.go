package jetstream

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/validate"
	"github.com/jetwal/jetwal/subject"
)

// Requests the meta leader answers in a cluster: about the account, or
// about streams as a set. Everything else names a stream (the first token
// after the operation) and is answered by the server serving it.
var metaOps = map[string]bool{
	"INFO": true, "STREAM.CREATE": true, "STREAM.UPDATE": true, "STREAM.DELETE": true,
	"STREAM.NAMES": true, "STREAM.LIST": true, "STREAM.RESTORE": true, "STREAM.PEER.REMOVE": true,
	"STREAM.PEER.EVACUATE": true,
}

// answers reports whether this server answers a request in a cluster.
func (js *JetStream) answers(op, args string) bool {
	if metaOps[op] {
		return js.cl.c.IsMetaLeader()
	}
	name, _, _ := strings.Cut(args, ".")
	if op == "DIRECT.GET" && js.directByQueue(name) && js.directSubscribed(name) {
		return false // the leader's queue subscription answers (cluster_direct.go)
	}
	return js.servesStream(name)
}

// servesStream reports whether this server answers requests about the
// stream name: it serves it, or it is the meta leader and no such stream
// exists (the answer is "not found").
func (js *JetStream) servesStream(name string) bool {
	if js.lookup(name) != nil {
		return true
	}
	if !js.cl.c.IsMetaLeader() {
		return false
	}
	_, ok := js.assignment(name)
	return !ok
}

// preferredLeader picks the peer that campaigns first in a new stream's
// group: the one leading the fewest of the streams this server holds a
// replica of (their leaders are what it can see), this server on a tie
// (it answers the create as soon as it serves), so that new streams'
// leaders spread over the servers.
func (js *JetStream) preferredLeader(peers []string) string {
	led := map[string]int{}
	for _, h := range js.hostedStreams() {
		h.mu.Lock()
		rep := h.rep
		h.mu.Unlock()
		if rep == nil {
			continue
		}
		if l := rep.LeaderPeer(); l != "" {
			led[l]++
		}
	}
	self := js.cl.c.Self()
	best, fewest := "", 0
	for _, p := range peers {
		n := led[p]
		if best == "" || n < fewest || n == fewest && p == self {
			best, fewest = p, n
		}
	}
	return best
}

// clusterCreateStream is CreateStream in a cluster: the meta group
// assigns the stream to its peers.
func (js *JetStream) clusterCreateStream(cfg api.StreamConfig) (*api.StreamInfo, bool, *api.ApiError) {
	if old, ok := js.assignment(cfg.Name); ok {
		if !validate.SameStream(&old.Config, &cfg) {
			return nil, false, api.NewError(api.ErrStreamNameExist)
		}
		return js.replyInfo(old, false), false, nil
	}
	for _, a := range js.assignments() {
		for _, subj := range cfg.Subjects {
			for _, other := range a.Config.Subjects {
				if subject.Overlap(subj, other) {
					return nil, false, api.NewError(api.ErrStreamSubjectOverlap)
				}
			}
		}
	}
	if aerr := js.checkClusterStreamLimits("", &cfg); aerr != nil {
		return nil, false, aerr
	}
	peers, aerr := js.placeStream(&cfg, max(cfg.Replicas, 1), nil, nil)
	if aerr != nil {
		return nil, false, aerr
	}
	a := streamAssignment{Config: cfg, Created: time.Now().UTC(), Peers: peers, Preferred: js.preferredLeader(peers)}
	if err := js.propose(streamKeyPrefix+cfg.Name, a); err != nil {
		return nil, false, api.Errorf(api.ErrStreamCreate, "%v", err)
	}
	js.adviseStream(cfg.Name, api.ActionCreate)
	return js.replyInfo(a, true), true, nil
}

// clusterUpdateStream is UpdateStream in a cluster: the meta group
// records the new config (and the new peers of a rescaled stream).
func (js *JetStream) clusterUpdateStream(norm api.StreamConfig) (*api.StreamInfo, *api.ApiError) {
	a, ok := js.assignment(norm.Name)
	if !ok {
		return nil, api.NewError(api.ErrStreamNotFound)
	}
	if a.Convert != nil {
		return nil, api.Errorf(api.ErrStreamUpdate, "stream %s is being converted into a replicated stream: try again once it is", norm.Name)
	}
	cfg, aerr := validate.StreamUpdate(&a.Config, &norm)
	if aerr == nil {
		aerr = js.checkClusterStreamLimits(cfg.Name, &cfg)
	}
	if aerr != nil {
		return nil, aerr
	}
	if n := max(cfg.Replicas, 1); n != max(a.Config.Replicas, 1) {
		if n > 1 && !a.grouped() {
			return js.startConversion(a, cfg, n) // cluster_convert.go
		}
		if a, aerr = js.rescale(a, &cfg, n); aerr != nil {
			return nil, aerr
		}
	}
	if a.grouped() && !reflect.DeepEqual(cfg.Placement, a.Config.Placement) {
		if a, aerr = js.movePlacement(a, &cfg); aerr != nil {
			return nil, aerr
		}
	}
	a.Config = cfg
	if err := js.propose(streamKeyPrefix+cfg.Name, a); err != nil {
		return nil, api.Errorf(api.ErrStreamUpdate, "%v", err)
	}
	js.adviseStream(cfg.Name, api.ActionModify)
	return js.replyInfo(a, false), nil
}

// clusterDeleteStream is DeleteStream in a cluster: the stream's and its
// consumers' assignments leave the meta group.
func (js *JetStream) clusterDeleteStream(name string) *api.ApiError {
	if _, ok := js.assignment(name); !ok {
		return api.NewError(api.ErrStreamNotFound)
	}
	for _, k := range js.cl.c.Keys(consumerKeyPrefix + name + "/") {
		if err := js.cl.c.Delete(k); err != nil {
			return api.Errorf(api.ErrStreamDelete, "%v", err)
		}
	}
	js.forgetConsumerState(name, "")
	if err := js.cl.c.Delete(streamKeyPrefix + name); err != nil {
		return api.Errorf(api.ErrStreamDelete, "%v", err)
	}
	return nil
}

func (js *JetStream) propose(key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return js.cl.c.Put(key, b)
}

// replyInfo is a stream's info as a create or update replies with it:
// this server's when it serves the stream (waiting a little for a new stream's group to elect
// its leader and, when that is this server, to serve it, so that the
// client's next request about the stream finds it served), else the
// assignment's config with the state of this server's replica, or an
// empty state.
func (js *JetStream) replyInfo(a streamAssignment, created bool) *api.StreamInfo {
	info := js.assignedInfo(a, created)
	info.Config = validate.WithDynamicMetadata(info.Config, js.srv.Version())
	return info
}

func (js *JetStream) assignedInfo(a streamAssignment, wait bool) *api.StreamInfo {
	name := a.Config.Name
	hosts := slices.Contains(a.Peers, js.cl.c.Self())
	// The wait ends early when JetStream closes: Close waits for this
	// handler.
	for end := time.Now().Add(3 * time.Second); wait && hosts && time.Now().Before(end) && !js.isClosed(); {
		if s := js.lookup(name); s != nil {
			break
		}
		// A leader elsewhere: it marks the stream served in the meta map.
		if h := js.hostedStream(name); h != nil {
			if rep := h.replica(); rep != nil {
				if l := rep.Leader(); l != "" && l != js.srv.ServerName() && rep.Serving() {
					break
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if s := js.lookup(name); s != nil {
		info := js.streamInfo(s, false)
		info.Cluster = js.clusterInfo(s)
		return info
	}
	info := &api.StreamInfo{Config: a.Config, Created: a.Created, TimeStamp: time.Now().UTC(),
		Cluster: &api.ClusterInfo{Name: js.cl.c.Name()}}
	var rep Replica
	if h := js.hostedStream(name); h != nil {
		rep = h.replica()
	}
	if rep != nil {
		st := rep.Store().State()
		info.State = apiState(&st, 0)
		info.Cluster.Leader = rep.Leader()
	} else if !a.grouped() {
		info.Cluster.Leader = js.cl.c.NameOf(a.Peers[0])
	}
	return info
}

// clusterStreamNames is StreamNamesPage in a cluster.
func (js *JetStream) clusterStreamNames(req api.StreamNamesRequest) ([]string, api.Paged, *api.ApiError) {
	all, from, to := js.clusterPage(req, api.NamesLimit)
	var names []string
	for _, a := range all[from:to] {
		names = append(names, a.Config.Name)
	}
	return names, api.Paged{Total: len(all), Offset: from, Limit: api.NamesLimit}, nil
}

// clusterStreamList is StreamListPage in a cluster.
func (js *JetStream) clusterStreamList(req api.StreamNamesRequest) ([]*api.StreamInfo, api.Paged, *api.ApiError) {
	all, from, to := js.clusterPage(req, api.ListLimit)
	infos := make([]*api.StreamInfo, 0, to-from)
	leaders := js.leaderInfos(all[from:to])
	for _, a := range all[from:to] {
		infos = append(infos, js.listedInfo(a, leaders))
	}
	return infos, api.Paged{Total: len(all), Offset: from, Limit: api.ListLimit}, nil
}

// clusterPage is streamPage over the assignments; unlike streamPage it
// does not check the filter's syntax.
func (js *JetStream) clusterPage(req api.StreamNamesRequest, limit int) (all []streamAssignment, from, to int) {
	for _, a := range js.assignments() {
		if req.Subject == "" || slices.ContainsFunc(a.Config.Subjects, func(s string) bool { return subject.Overlap(s, req.Subject) }) {
			all = append(all, a)
		}
	}
	from, to = page(len(all), req.Offset, limit)
	return all, from, to
}

// clusterAccountInfo is AccountInfo in a cluster: of every stream of the
// meta group.
func (js *JetStream) clusterAccountInfo() *api.AccountStats {
	st := &api.AccountStats{
		Domain: js.cfg.Domain,
		Limits: js.accountLimits(),
		API:    api.APIStats{Level: api.Level, Total: js.apiTotal.Load(), Errors: js.apiErrors.Load()},
	}
	all := js.assignments()
	infos := js.leaderInfos(all)
	for _, a := range all {
		st.Streams++
		// As nats-server counts it: what every replica stores.
		info := js.listedInfo(a, infos)
		bytes := info.State.Bytes * uint64(max(len(a.Peers), 1))
		if a.Config.Storage == api.MemoryStorage {
			st.Memory += bytes
		} else {
			st.Store += bytes
		}
		if infos[a.Config.Name] != nil {
			st.Consumers += info.State.Consumers
		} else {
			st.Consumers += len(js.cl.c.Keys(consumerKeyPrefix + a.Config.Name + "/"))
		}
	}
	return st
}

// StepDownStream moves the leadership of a replicated stream's group
// (apiserver.ClusterOps): req's placement (preferred server, cluster,
// tags) picks where it goes, with the consumer step-down's checks and
// errors (stepDownTarget, cluster_stepdown.go).
func (js *JetStream) StepDownStream(name string, req api.LeaderStepDownRequest, bodyErr *api.ApiError) *api.ApiError {
	s := js.lookup(name)
	if s == nil {
		return api.NewError(api.ErrStreamNotFound)
	}
	if s.rep == nil || js.cl == nil {
		return api.NewError(api.ErrClusterRequired)
	}
	a, ok := js.assignment(s.name)
	if !ok {
		return api.NewError(api.ErrStreamNotFound)
	}
	if bodyErr != nil {
		return bodyErr
	}
	preferred, aerr := js.stepDownTarget(req.Placement, a.Peers, js.cl.c.Self())
	if aerr != nil {
		return aerr
	}
	if err := s.rep.StepDownTo(preferred); err != nil {
		return api.Errorf(api.ErrStreamGeneral, "%v", err)
	}
	return nil
}

// recordConsumer puts a durable consumer of a replicated stream in the
// meta group, so that the stream's next leader serves it too.
func (js *JetStream) recordConsumer(s *stream, cfg api.ConsumerConfig) {
	if s.rep == nil || cfg.Durable == "" {
		return
	}
	if err := js.propose(consumerKeyPrefix+s.name+"/"+cfg.Durable, consumerAssignment{Config: cfg, Created: time.Now().UTC()}); err != nil {
		js.log.Error("cluster: recording consumer", "stream", s.name, "consumer", cfg.Durable, "error", err)
	}
}

// forgetConsumer removes a deleted consumer's assignment.
func (js *JetStream) forgetConsumer(s *stream, name string) {
	if s.rep == nil {
		return
	}
	if err := js.cl.c.Delete(consumerKeyPrefix + s.name + "/" + name); err != nil {
		js.log.Error("cluster: forgetting consumer", "stream", s.name, "consumer", name, "error", err)
	}
	js.forgetConsumerState(s.name, name)
}

// isClosed reports whether Close has begun.
func (js *JetStream) isClosed() bool {
	js.mu.RLock()
	defer js.mu.RUnlock()
	return js.closed
}
