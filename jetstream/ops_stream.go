package jetstream

import (
	"sort"
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/validate"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/subject"
)

// AccountInfo returns the account's usage, limits and API stats
// (apiserver.StreamOps): in a cluster, of every stream of the meta group.
func (js *JetStream) AccountInfo() *api.AccountStats {
	if js.cl != nil {
		return js.clusterAccountInfo()
	}
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
	return st
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

// CreateStream creates a stream of a checked config (apiserver.StreamOps):
// in a cluster, through the meta group.
func (js *JetStream) CreateStream(cfg api.StreamConfig) (*api.StreamInfo, bool, *api.ApiError) {
	if js.cl != nil {
		return js.clusterCreateStream(cfg)
	}
	if aerr := validate.Replicas(cfg.Replicas); aerr != nil {
		return nil, false, aerr
	}
	s, created, aerr := js.createStream(cfg)
	if aerr != nil {
		return nil, false, aerr
	}
	if created {
		js.adviseStream(cfg.Name, api.ActionCreate)
	}
	info := js.streamInfo(s, false)
	info.Config = validate.WithDynamicMetadata(info.Config, js.srv.Version())
	return info, created, nil
}

// UpdateStream changes a stream's config to a checked one
// (apiserver.StreamOps): in a cluster, through the meta group.
func (js *JetStream) UpdateStream(cfg api.StreamConfig) (*api.StreamInfo, *api.ApiError) {
	if js.cl != nil {
		return js.clusterUpdateStream(cfg)
	}
	s, aerr := js.updateStream(cfg)
	if aerr != nil {
		return nil, aerr
	}
	js.adviseStream(cfg.Name, api.ActionModify)
	info := js.streamInfo(s, false)
	info.Config = validate.WithDynamicMetadata(info.Config, js.srv.Version())
	return info, nil
}

// StreamInfo describes the stream name, with optional deleted details and
// a subjects_filter that lists per-subject counts, paged by offset
// (apiserver.StreamOps).
func (js *JetStream) StreamInfo(name string, req api.StreamInfoRequest) (*api.StreamInfo, api.Paged, *api.ApiError) {
	var paged api.Paged
	s := js.lookup(name)
	if s == nil {
		return nil, paged, api.NewError(api.ErrStreamNotFound)
	}
	info := js.streamInfo(s, req.DeletedDetails)
	info.Config = validate.WithDynamicMetadata(info.Config, js.srv.Version())
	info.Cluster = js.clusterInfo(s)
	if req.SubjectsFilter == "" {
		return info, paged, nil
	}
	if !subject.ValidFilter(req.SubjectsFilter) {
		return nil, paged, api.Errorf(api.ErrBadRequest, "invalid subjects_filter %q", req.SubjectsFilter)
	}
	filter := req.SubjectsFilter
	if filter == ">" {
		filter = ""
	}
	counts := s.subjectCounts(filter)
	if n := len(counts); n > 0 {
		offset := max(req.Offset, 0)
		paged = api.Paged{Total: n, Offset: offset, Limit: api.SubjectDetailLimit}
		names := make([]string, 0, n)
		for subj := range counts {
			names = append(names, subj)
		}
		sort.Strings(names)
		offset = min(offset, n)
		end := min(offset+api.SubjectDetailLimit, n)
		if end > offset {
			info.State.Subjects = make(map[string]uint64, end-offset)
			for _, subj := range names[offset:end] {
				info.State.Subjects[subj] = counts[subj].Msgs
			}
		}
	}
	return info, paged, nil
}

// DeleteStream deletes the stream name (apiserver.StreamOps): in a
// cluster, its assignment and its consumers' in the meta group.
func (js *JetStream) DeleteStream(name string) *api.ApiError {
	if js.cl != nil {
		return js.clusterDeleteStream(name)
	}
	if name == "" || js.lookup(name) == nil {
		return api.NewError(api.ErrStreamNotFound)
	}
	return js.deleteStream(name)
}

// PurgeStream removes the messages of the stream name that req selects:
// all, or by filter, up to a sequence, or keeping the newest N
// (apiserver.StreamOps).
func (js *JetStream) PurgeStream(name string, req api.StreamPurgeRequest) (uint64, *api.ApiError) {
	s := js.lookup(name)
	if s == nil {
		return 0, api.NewError(api.ErrStreamNotFound)
	}
	return s.purge(req)
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

// streamPage returns the streams req selects and the page [from, to) of
// them.
func (js *JetStream) streamPage(req api.StreamNamesRequest, limit int) (all []*stream, from, to int, aerr *api.ApiError) {
	if req.Subject != "" && !subject.ValidFilter(req.Subject) {
		return nil, 0, 0, api.Errorf(api.ErrBadRequest, "bad request: invalid subject filter %q", req.Subject)
	}
	all = js.matchingStreams(req.Subject)
	from, to = page(len(all), req.Offset, limit)
	return all, from, to, nil
}

// StreamNamesPage lists the names of the streams req selects, one page
// (apiserver.StreamOps): in a cluster, of the meta group's streams.
func (js *JetStream) StreamNamesPage(req api.StreamNamesRequest) ([]string, api.Paged, *api.ApiError) {
	if js.cl != nil {
		return js.clusterStreamNames(req)
	}
	all, from, to, aerr := js.streamPage(req, api.NamesLimit)
	if aerr != nil {
		return nil, api.Paged{}, aerr
	}
	var names []string
	for _, s := range all[from:to] {
		names = append(names, s.name)
	}
	return names, api.Paged{Total: len(all), Offset: from, Limit: api.NamesLimit}, nil
}

// StreamListPage lists the infos of the streams req selects, one page,
// without the server metadata keys, as nats-server lists them
// (apiserver.StreamOps): in a cluster, of the meta group's streams.
func (js *JetStream) StreamListPage(req api.StreamNamesRequest) ([]*api.StreamInfo, api.Paged, *api.ApiError) {
	if js.cl != nil {
		return js.clusterStreamList(req)
	}
	all, from, to, aerr := js.streamPage(req, api.ListLimit)
	if aerr != nil {
		return nil, api.Paged{}, aerr
	}
	infos := make([]*api.StreamInfo, 0, to-from)
	for _, s := range all[from:to] {
		infos = append(infos, js.streamInfo(s, false))
	}
	return infos, api.Paged{Total: len(all), Offset: from, Limit: api.ListLimit}, nil
}
