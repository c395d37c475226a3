package jetstream

import (
	"sort"
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/validate"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/subject"
)

// apiAccountInfo serves $JS.API.INFO.
func (js *JetStream) apiAccountInfo(r *apiRequest) {
	st := &api.AccountStats{
		Domain: js.cfg.Domain,
		Limits: js.accountLimits(),
		// Counted before this request, as nats-server reports it.
		API: api.APIStats{Level: api.Level, Total: js.apiTotal.Load(), Errors: js.apiErrors.Load()},
	}
	streams := js.streamList()
	for _, s := range streams {
		cfg := s.config()
		used := s.state(false).Bytes
		var reserved uint64
		if cfg.MaxBytes > 0 {
			reserved = uint64(cfg.MaxBytes)
		}
		if cfg.Storage == api.MemoryStorage {
			st.Memory += used
			st.ReservedMemory = addSatU(st.ReservedMemory, reserved)
		} else {
			st.Store += used
			st.ReservedStore = addSatU(st.ReservedStore, reserved)
		}
		st.Consumers += s.consumerCount()
	}
	st.Streams = len(streams)
	js.respond(r, api.AccountInfoResponse{Response: api.Response{Type: api.TypeAccountInfo}, AccountStats: st}, false)
}

// streamInfo builds the info of s; details fills the deleted list.
func (js *JetStream) streamInfo(s *stream, details bool) *api.StreamInfo {
	cfg := s.config()
	st := s.state(details)
	info := &api.StreamInfo{
		Config:    cfg,
		Created:   s.created,
		State:     apiState(&st, s.consumerCount()),
		TimeStamp: time.Now().UTC(),
	}
	info.Mirror, info.Sources = s.sourceInfos()
	return info
}

// apiState converts a store snapshot into the API's state block.
func apiState(st *store.State, consumers int) api.StreamState {
	out := api.StreamState{
		Msgs:       st.Msgs,
		Bytes:      st.Bytes,
		FirstSeq:   st.FirstSeq,
		LastSeq:    st.LastSeq,
		NumDeleted: st.NumDeleted,
		Deleted:    st.Deleted,
		Consumers:  consumers,
	}
	if !st.FirstTime.IsZero() {
		out.FirstTime = st.FirstTime.UTC()
	}
	if !st.LastTime.IsZero() {
		out.LastTime = st.LastTime.UTC()
	}
	if st.Msgs > 0 {
		out.NumSubjects = st.NumSubjects
	}
	if st.Lost != nil && len(st.Lost.Msgs) > 0 {
		out.Lost = &api.LostStreamData{Msgs: st.Lost.Msgs, Bytes: st.Lost.Bytes}
	}
	return out
}

// createLike holds what STREAM.CREATE and STREAM.UPDATE share: the name from
// the subject and the decoded, normalized config.
//
// A pedantic request is refused here if the config would be adjusted
// (validate.PedanticStream).
func (js *JetStream) decodeStreamConfig(r *apiRequest, typ string) (api.StreamConfig, bool) {
	name := streamArg(r)
	if name == "" {
		js.respondError(r, typ, api.NewError(api.ErrBadRequest))
		return api.StreamConfig{}, false
	}
	var req api.StreamCreateRequest
	if isEmptyRequest(r.data) {
		js.respondError(r, typ, api.Errorf(api.ErrInvalidJSON, "invalid JSON: request body is empty"))
		return api.StreamConfig{}, false
	}
	if aerr := decodeRequest(r.data, &req); aerr != nil {
		js.respondError(r, typ, aerr)
		return api.StreamConfig{}, false
	}
	if req.Name == "" {
		req.Name = name
	}
	if req.Name != name {
		js.respondError(r, typ, api.NewError(api.ErrStreamNameMismatch))
		return api.StreamConfig{}, false
	}
	if req.Pedantic {
		if aerr := validate.PedanticStream(&req.StreamConfig); aerr != nil {
			js.respondError(r, typ, aerr)
			return api.StreamConfig{}, false
		}
	}
	return req.StreamConfig, true
}

// decodeCreateConfig decodes and normalizes a STREAM.CREATE request; on bad
// input it has answered and ok is false.
func (js *JetStream) decodeCreateConfig(r *apiRequest) (cfg api.StreamConfig, ok bool) {
	const typ = api.TypeStreamCreate
	req, ok := js.decodeStreamConfig(r, typ)
	if !ok {
		return cfg, false
	}
	if req.Sealed {
		js.respondError(r, typ, validate.InvalidConfig("stream configuration for create can not be sealed"))
		return cfg, false
	}
	if req.MirrorDirect && !validate.RawPresent(req.Mirror) {
		// Checked here, before the config, as nats-server does.
		js.respondError(r, typ, validate.MirrorDirectWithoutMirror())
		return cfg, false
	}
	cfg, aerr := validate.Stream(&req)
	if aerr != nil {
		js.respondError(r, typ, aerr)
		return cfg, false
	}
	return cfg, true
}

// apiStreamCreate serves STREAM.CREATE.<name>.
func (js *JetStream) apiStreamCreate(r *apiRequest) {
	const typ = api.TypeStreamCreate
	cfg, ok := js.decodeCreateConfig(r)
	if !ok {
		return
	}
	if aerr := validate.Replicas(cfg.Replicas); aerr != nil {
		js.respondError(r, typ, aerr)
		return
	}
	s, created, aerr := js.createStream(cfg)
	if aerr != nil {
		js.respondError(r, typ, aerr)
		return
	}
	if created {
		js.adviseStream(cfg.Name, api.ActionCreate)
	}
	info := js.streamInfo(s, false)
	info.Config = validate.WithDynamicMetadata(info.Config, js.srv.Version())
	js.respond(r, api.StreamCreateResponse{Response: api.Response{Type: typ}, StreamInfo: info, DidCreate: created}, false)
}

// apiStreamUpdate serves STREAM.UPDATE.<name>.
func (js *JetStream) apiStreamUpdate(r *apiRequest) {
	const typ = api.TypeStreamUpdate
	req, ok := js.decodeStreamConfig(r, typ)
	if !ok {
		return
	}
	cfg, aerr := validate.Stream(&req)
	if aerr != nil {
		js.respondError(r, typ, aerr)
		return
	}
	s, aerr := js.updateStream(cfg)
	if aerr != nil {
		js.respondError(r, typ, aerr)
		return
	}
	js.adviseStream(cfg.Name, api.ActionModify)
	info := js.streamInfo(s, false)
	info.Config = validate.WithDynamicMetadata(info.Config, js.srv.Version())
	js.respond(r, api.StreamCreateResponse{Response: api.Response{Type: typ}, StreamInfo: info}, false)
}

// apiStreamInfo serves STREAM.INFO.<name>, with optional deleted details and
// a subjects_filter that lists per-subject counts (paged by offset).
func (js *JetStream) apiStreamInfo(r *apiRequest) {
	const typ = api.TypeStreamInfo
	var req api.StreamInfoRequest
	if aerr := decodeRequest(r.data, &req); aerr != nil {
		js.respond(r, api.StreamInfoResponse{Response: api.Response{Type: typ, Error: aerr}}, true)
		return
	}
	s := js.lookup(streamArg(r))
	if s == nil {
		js.respond(r, api.StreamInfoResponse{Response: api.Response{Type: typ, Error: api.NewError(api.ErrStreamNotFound)}}, true)
		return
	}
	resp := api.StreamInfoResponse{Response: api.Response{Type: typ}, StreamInfo: js.streamInfo(s, req.DeletedDetails)}
	resp.Config = validate.WithDynamicMetadata(resp.Config, js.srv.Version())
	resp.Cluster = js.clusterInfo(s)
	if req.SubjectsFilter != "" {
		if !subject.ValidFilter(req.SubjectsFilter) {
			js.respond(r, api.StreamInfoResponse{Response: api.Response{Type: typ,
				Error: api.Errorf(api.ErrBadRequest, "invalid subjects_filter %q", req.SubjectsFilter)}}, true)
			return
		}
		filter := req.SubjectsFilter
		if filter == ">" {
			filter = ""
		}
		counts := s.subjectCounts(filter)
		if n := len(counts); n > 0 {
			offset := max(req.Offset, 0)
			resp.Paged = api.Paged{Total: n, Offset: offset, Limit: api.SubjectDetailLimit}
			names := make([]string, 0, n)
			for subj := range counts {
				names = append(names, subj)
			}
			sort.Strings(names)
			offset = min(offset, n)
			end := min(offset+api.SubjectDetailLimit, n)
			if end > offset {
				resp.State.Subjects = make(map[string]uint64, end-offset)
				for _, subj := range names[offset:end] {
					resp.State.Subjects[subj] = counts[subj].Msgs
				}
			}
		}
	}
	js.respond(r, resp, false)
}

// apiStreamDelete serves STREAM.DELETE.<name>.
func (js *JetStream) apiStreamDelete(r *apiRequest) {
	const typ = api.TypeStreamDelete
	if !isEmptyRequest(r.data) {
		js.respondError(r, typ, api.NewError(api.ErrNotEmptyRequest))
		return
	}
	name := streamArg(r)
	if name == "" || js.lookup(name) == nil {
		js.respondError(r, typ, api.NewError(api.ErrStreamNotFound))
		return
	}
	if aerr := js.deleteStream(name); aerr != nil {
		js.respondError(r, typ, aerr)
		return
	}
	js.respond(r, api.StreamDeleteResponse{Response: api.Response{Type: typ}, Success: true}, false)
}

// apiStreamPurge serves STREAM.PURGE.<name>: all, or by filter, up to a
// sequence, or keeping the newest N.
func (js *JetStream) apiStreamPurge(r *apiRequest) {
	const typ = api.TypeStreamPurge
	var req api.StreamPurgeRequest
	s := js.streamRequest(r, typ, &req, bodyOptional)
	if s == nil {
		return
	}
	purged, aerr := s.purge(req)
	if aerr != nil {
		js.respondError(r, typ, aerr)
		return
	}
	js.respond(r, api.StreamPurgeResponse{Response: api.Response{Type: typ}, Success: true, Purged: purged}, false)
}

// matchingStreams returns the streams, sorted by name, with a subject that
// overlaps filter ("" = all).
func (js *JetStream) matchingStreams(filter string) []*stream {
	js.mu.RLock()
	out := make([]*stream, 0, len(js.streams))
	for _, s := range js.streams {
		if filter == "" || s.capturesAny(filter) {
			out = append(out, s)
		}
	}
	js.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func (s *stream) capturesAny(filter string) bool {
	s.cfgMu.RLock()
	defer s.cfgMu.RUnlock()
	for _, subj := range s.cfg.Subjects {
		if subject.Overlap(subj, filter) {
			return true
		}
	}
	return false
}

// page applies an offset and a limit to n entries.
func page(n, offset, limit int) (from, to int) {
	from = min(max(offset, 0), n)
	return from, min(from+limit, n)
}

// streamPage decodes a STREAM.NAMES or STREAM.LIST request and returns the
// streams it selects and the page [from, to) of them; on bad input it has
// answered with the error and ok is false.
func (js *JetStream) streamPage(r *apiRequest, typ string, limit int) (all []*stream, from, to int, ok bool) {
	var req api.StreamNamesRequest
	if aerr := decodeRequest(r.data, &req); aerr != nil {
		js.respondError(r, typ, aerr)
		return nil, 0, 0, false
	}
	if req.Subject != "" && !subject.ValidFilter(req.Subject) {
		js.respondError(r, typ, api.Errorf(api.ErrBadRequest, "bad request: invalid subject filter %q", req.Subject))
		return nil, 0, 0, false
	}
	all = js.matchingStreams(req.Subject)
	from, to = page(len(all), req.Offset, limit)
	return all, from, to, true
}

// apiStreamNames serves STREAM.NAMES.
func (js *JetStream) apiStreamNames(r *apiRequest) {
	const typ = api.TypeStreamNames
	all, from, to, ok := js.streamPage(r, typ, api.NamesLimit)
	if !ok {
		return
	}
	resp := api.StreamNamesResponse{
		Response: api.Response{Type: typ},
		Paged:    api.Paged{Total: len(all), Offset: from, Limit: api.NamesLimit},
	}
	for _, s := range all[from:to] {
		resp.Streams = append(resp.Streams, s.name)
	}
	js.respond(r, resp, false)
}

// apiStreamList serves STREAM.LIST: infos without the server metadata keys,
// as nats-server lists them.
func (js *JetStream) apiStreamList(r *apiRequest) {
	const typ = api.TypeStreamList
	all, from, to, ok := js.streamPage(r, typ, api.ListLimit)
	if !ok {
		return
	}
	resp := api.StreamListResponse{
		Response: api.Response{Type: typ},
		Paged:    api.Paged{Total: len(all), Offset: from, Limit: api.ListLimit},
		Streams:  make([]*api.StreamInfo, 0, to-from),
	}
	for _, s := range all[from:to] {
		resp.Streams = append(resp.Streams, js.streamInfo(s, false))
	}
	js.respond(r, resp, false)
}
