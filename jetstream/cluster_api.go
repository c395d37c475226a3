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

// registerClusterAPI replaces the handlers whose work goes through the
// meta group.
func (js *JetStream) registerClusterAPI() {
	js.registerAPI("INFO", js.mgmt, js.apiClusterAccountInfo)
	js.registerAPI("STREAM.CREATE", js.mgmt, js.apiClusterStreamCreate)
	js.registerAPI("STREAM.UPDATE", js.mgmt, js.apiClusterStreamUpdate)
	js.registerAPI("STREAM.DELETE", js.mgmt, js.apiClusterStreamDelete)
	js.registerAPI("STREAM.NAMES", js.mgmt, js.apiClusterStreamNames)
	js.registerAPI("STREAM.LIST", js.mgmt, js.apiClusterStreamList)
	js.registerAPI("STREAM.LEADER.STEPDOWN", js.mgmt, js.apiStreamStepDown)
	js.registerAPI("STREAM.PEER.REMOVE", js.mgmt, js.apiStreamRemovePeer(api.TypeStreamRemovePeer))
	// nats-server's evacuation moves the replica before the old one
	// leaves, which is what jetwal's peer-remove does already.
	js.registerAPI("STREAM.PEER.EVACUATE", js.mgmt, js.apiStreamRemovePeer(api.TypeStreamEvacuatePeer))
	js.registerAPI("CONSUMER.LEADER.STEPDOWN", js.mgmt, js.apiConsumerStepDown)
	// A system account request (cluster_stepdown.go): nats-server leaves
	// it unanswered in other accounts.
	js.registerAPI("META.LEADER.STEPDOWN", nil, nil)
	js.registerAPI("SERVER.REMOVE", nil, nil)   // cluster_server_remove.go
	js.registerAPI("SERVER.EVACUATE", nil, nil) // cluster_server_remove.go
	// A restore reads the archive here and hands the stream to its group
	// (cluster_restore.go).
	js.registerAPI("STREAM.RESTORE", js.mgmt, js.apiStreamRestore)
}

// preferredLeader picks the peer that campaigns first in a new stream's
// group: the one leading the fewest of the streams this server holds a
// replica of (their leaders are what it can see), this server on a tie
// (it answers the create as soon as it serves), so that new streams'
// leaders spread over the servers.
func (js *JetStream) preferredLeader(peers []string) string {
	js.cl.mu.Lock()
	hs := make([]*hosted, 0, len(js.cl.hosted))
	for _, h := range js.cl.hosted {
		hs = append(hs, h)
	}
	js.cl.mu.Unlock()
	led := map[string]int{}
	for _, h := range hs {
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

func (js *JetStream) apiClusterStreamCreate(r *apiRequest) {
	const typ = api.TypeStreamCreate
	cfg, ok := js.decodeCreateConfig(r)
	if !ok {
		return
	}
	if old, ok := js.assignment(cfg.Name); ok {
		if !validate.SameStream(&old.Config, &cfg) {
			js.respondError(r, typ, api.NewError(api.ErrStreamNameExist))
			return
		}
		js.respondClusterInfo(r, typ, old, false)
		return
	}
	for _, a := range js.assignments() {
		for _, subj := range cfg.Subjects {
			for _, other := range a.Config.Subjects {
				if subject.Overlap(subj, other) {
					js.respondError(r, typ, api.NewError(api.ErrStreamSubjectOverlap))
					return
				}
			}
		}
	}
	if aerr := js.checkClusterStreamLimits("", &cfg); aerr != nil {
		js.respondError(r, typ, aerr)
		return
	}
	peers, aerr := js.placeStream(&cfg, max(cfg.Replicas, 1), nil, nil)
	if aerr != nil {
		js.respondError(r, typ, aerr)
		return
	}
	a := streamAssignment{Config: cfg, Created: time.Now().UTC(), Peers: peers, Preferred: js.preferredLeader(peers)}
	if err := js.propose(streamKeyPrefix+cfg.Name, a); err != nil {
		js.respondError(r, typ, api.Errorf(api.ErrStreamCreate, "%v", err))
		return
	}
	js.adviseStream(cfg.Name, api.ActionCreate)
	js.respondClusterInfo(r, typ, a, true)
}

func (js *JetStream) apiClusterStreamUpdate(r *apiRequest) {
	const typ = api.TypeStreamUpdate
	req, ok := js.decodeStreamConfig(r, typ)
	if !ok {
		return
	}
	norm, aerr := validate.Stream(&req)
	if aerr != nil {
		js.respondError(r, typ, aerr)
		return
	}
	a, ok := js.assignment(norm.Name)
	if !ok {
		js.respondError(r, typ, api.NewError(api.ErrStreamNotFound))
		return
	}
	cfg, aerr := validate.StreamUpdate(&a.Config, &norm)
	if aerr == nil {
		aerr = js.checkClusterStreamLimits(cfg.Name, &cfg)
	}
	if aerr != nil {
		js.respondError(r, typ, aerr)
		return
	}
	if n := max(cfg.Replicas, 1); n != max(a.Config.Replicas, 1) {
		if a, aerr = js.rescale(a, &cfg, n); aerr != nil {
			js.respondError(r, typ, aerr)
			return
		}
	}
	if max(cfg.Replicas, 1) > 1 && !reflect.DeepEqual(cfg.Placement, a.Config.Placement) {
		if a, aerr = js.movePlacement(a, &cfg); aerr != nil {
			js.respondError(r, typ, aerr)
			return
		}
	}
	a.Config = cfg
	if err := js.propose(streamKeyPrefix+cfg.Name, a); err != nil {
		js.respondError(r, typ, api.Errorf(api.ErrStreamUpdate, "%v", err))
		return
	}
	js.adviseStream(cfg.Name, api.ActionModify)
	js.respondClusterInfo(r, typ, a, false)
}

func (js *JetStream) apiClusterStreamDelete(r *apiRequest) {
	const typ = api.TypeStreamDelete
	if !isEmptyRequest(r.data) {
		js.respondError(r, typ, api.NewError(api.ErrNotEmptyRequest))
		return
	}
	name := streamArg(r)
	if _, ok := js.assignment(name); !ok {
		js.respondError(r, typ, api.NewError(api.ErrStreamNotFound))
		return
	}
	for _, k := range js.cl.c.Keys(consumerKeyPrefix + name + "/") {
		if err := js.cl.c.Delete(k); err != nil {
			js.respondError(r, typ, api.Errorf(api.ErrStreamDelete, "%v", err))
			return
		}
	}
	js.forgetConsumerState(name, "")
	if err := js.cl.c.Delete(streamKeyPrefix + name); err != nil {
		js.respondError(r, typ, api.Errorf(api.ErrStreamDelete, "%v", err))
		return
	}
	js.respond(r, api.StreamDeleteResponse{Response: api.Response{Type: typ}, Success: true}, false)
}

func (js *JetStream) propose(key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return js.cl.c.Put(key, b)
}

// respondClusterInfo answers with a stream's info: this server's when it
// serves the stream (waiting a little for a new stream's group to elect
// its leader and, when that is this server, to serve it, so that the
// client's next request about the stream finds it served), else the
// assignment's config with the state of this server's replica, or an
// empty state.
func (js *JetStream) respondClusterInfo(r *apiRequest, typ string, a streamAssignment, created bool) {
	info := js.assignedInfo(a, created)
	info.Config = validate.WithDynamicMetadata(info.Config, js.srv.Version())
	js.respond(r, api.StreamCreateResponse{Response: api.Response{Type: typ}, StreamInfo: info, DidCreate: created}, false)
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
		if h := js.hostedStream(name); h != nil && h.rep != nil {
			if l := h.rep.Leader(); l != "" && l != js.srv.ServerName() && h.rep.Serving() {
				break
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
	if h := js.hostedStream(name); h != nil && h.rep != nil {
		st := h.rep.Store().State()
		info.State = apiState(&st, 0)
		info.Cluster.Leader = h.rep.Leader()
	} else if len(a.Peers) == 1 {
		info.Cluster.Leader = js.cl.c.NameOf(a.Peers[0])
	}
	return info
}

func (js *JetStream) apiClusterStreamNames(r *apiRequest) {
	const typ = api.TypeStreamNames
	all, from, to, ok := js.clusterPage(r, typ, api.NamesLimit)
	if !ok {
		return
	}
	resp := api.StreamNamesResponse{Response: api.Response{Type: typ},
		Paged: api.Paged{Total: len(all), Offset: from, Limit: api.NamesLimit}}
	for _, a := range all[from:to] {
		resp.Streams = append(resp.Streams, a.Config.Name)
	}
	js.respond(r, resp, false)
}

func (js *JetStream) apiClusterStreamList(r *apiRequest) {
	const typ = api.TypeStreamList
	all, from, to, ok := js.clusterPage(r, typ, api.ListLimit)
	if !ok {
		return
	}
	resp := api.StreamListResponse{Response: api.Response{Type: typ},
		Paged:   api.Paged{Total: len(all), Offset: from, Limit: api.ListLimit},
		Streams: make([]*api.StreamInfo, 0, to-from)}
	infos := js.leaderInfos(all[from:to])
	for _, a := range all[from:to] {
		resp.Streams = append(resp.Streams, js.listedInfo(a, infos))
	}
	js.respond(r, resp, false)
}

// clusterPage is streamPage over the assignments.
func (js *JetStream) clusterPage(r *apiRequest, typ string, limit int) (all []streamAssignment, from, to int, ok bool) {
	var req api.StreamNamesRequest
	if aerr := decodeRequest(r.data, &req); aerr != nil {
		js.respondError(r, typ, aerr)
		return nil, 0, 0, false
	}
	for _, a := range js.assignments() {
		if req.Subject == "" || slices.ContainsFunc(a.Config.Subjects, func(s string) bool { return subject.Overlap(s, req.Subject) }) {
			all = append(all, a)
		}
	}
	from, to = page(len(all), req.Offset, limit)
	return all, from, to, true
}

func (js *JetStream) apiClusterAccountInfo(r *apiRequest) {
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
	js.respond(r, api.AccountInfoResponse{Response: api.Response{Type: api.TypeAccountInfo}, AccountStats: st}, false)
}

// apiStreamStepDown serves STREAM.LEADER.STEPDOWN.<stream>: the optional
// body's placement (preferred server, cluster, tags) picks where the
// leadership goes, with the consumer step-down's checks and errors
// (stepDownTarget, cluster_stepdown.go).
func (js *JetStream) apiStreamStepDown(r *apiRequest) {
	const typ = api.TypeStreamLeaderStepDown
	s := js.lookup(streamArg(r))
	if s == nil {
		js.respondError(r, typ, api.NewError(api.ErrStreamNotFound))
		return
	}
	if s.rep == nil {
		js.respondError(r, typ, api.NewError(api.ErrClusterRequired))
		return
	}
	a, ok := js.assignment(s.name)
	if !ok {
		js.respondError(r, typ, api.NewError(api.ErrStreamNotFound))
		return
	}
	preferred, aerr := js.stepDownTarget(r.data, a.Peers, js.cl.c.Self())
	if aerr != nil {
		js.respondError(r, typ, aerr)
		return
	}
	if err := s.rep.StepDownTo(preferred); err != nil {
		js.respondError(r, typ, api.Errorf(api.ErrStreamGeneral, "%v", err))
		return
	}
	js.respond(r, api.StreamDeleteResponse{Response: api.Response{Type: typ}, Success: true}, false)
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
