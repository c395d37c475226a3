package apiserver

import (
	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/validate"
)

func (s *Server) registerStream() {
	s.Register("INFO", Mgmt, s.accountInfo)
	s.Register("STREAM.CREATE", Mgmt, s.streamCreate)
	s.Register("STREAM.UPDATE", Mgmt, s.streamUpdate)
	s.Register("STREAM.INFO", Mgmt, s.streamInfo)
	s.Register("STREAM.DELETE", Mgmt, s.streamDelete)
	s.Register("STREAM.PURGE", Mgmt, s.streamPurge)
	s.Register("STREAM.NAMES", Mgmt, s.streamNames)
	s.Register("STREAM.LIST", Mgmt, s.streamList)
}

// accountInfo serves $JS.API.INFO.
func (s *Server) accountInfo(r *Request) {
	s.Respond(r, api.AccountInfoResponse{Response: api.Response{Type: api.TypeAccountInfo}, AccountStats: s.ops.AccountInfo()}, false)
}

// decodeStreamConfig holds what STREAM.CREATE and STREAM.UPDATE share: the
// name from the subject and the decoded config; on bad input it has
// answered and ok is false.
//
// A pedantic request is refused here if the config would be adjusted
// (validate.PedanticStream).
func (s *Server) decodeStreamConfig(r *Request, typ string) (cfg api.StreamConfig, ok bool) {
	name := StreamArg(r)
	if name == "" {
		s.RespondError(r, typ, api.NewError(api.ErrBadRequest))
		return cfg, false
	}
	var req api.StreamCreateRequest
	if IsEmpty(r.Data) {
		s.RespondError(r, typ, api.Errorf(api.ErrInvalidJSON, "invalid JSON: request body is empty"))
		return cfg, false
	}
	if aerr := Decode(r.Data, &req); aerr != nil {
		s.RespondError(r, typ, aerr)
		return cfg, false
	}
	if req.Name == "" {
		req.Name = name
	}
	if req.Name != name {
		s.RespondError(r, typ, api.NewError(api.ErrStreamNameMismatch))
		return cfg, false
	}
	if req.Pedantic {
		if aerr := validate.PedanticStream(&req.StreamConfig); aerr != nil {
			s.RespondError(r, typ, aerr)
			return cfg, false
		}
	}
	return req.StreamConfig, true
}

// streamCreate serves STREAM.CREATE.<name>.
func (s *Server) streamCreate(r *Request) {
	const typ = api.TypeStreamCreate
	req, ok := s.decodeStreamConfig(r, typ)
	if !ok {
		return
	}
	if req.Sealed {
		s.RespondError(r, typ, validate.InvalidConfig("stream configuration for create can not be sealed"))
		return
	}
	if req.MirrorDirect && !validate.RawPresent(req.Mirror) {
		// Checked here, before the config, as nats-server does.
		s.RespondError(r, typ, validate.MirrorDirectWithoutMirror())
		return
	}
	cfg, aerr := validate.Stream(&req)
	if aerr != nil {
		s.RespondError(r, typ, aerr)
		return
	}
	info, created, aerr := s.ops.CreateStream(cfg)
	if aerr != nil {
		s.RespondError(r, typ, aerr)
		return
	}
	s.Respond(r, api.StreamCreateResponse{Response: api.Response{Type: typ}, StreamInfo: info, DidCreate: created}, false)
}

// streamUpdate serves STREAM.UPDATE.<name>.
func (s *Server) streamUpdate(r *Request) {
	const typ = api.TypeStreamUpdate
	req, ok := s.decodeStreamConfig(r, typ)
	if !ok {
		return
	}
	cfg, aerr := validate.Stream(&req)
	if aerr != nil {
		s.RespondError(r, typ, aerr)
		return
	}
	info, aerr := s.ops.UpdateStream(cfg)
	if aerr != nil {
		s.RespondError(r, typ, aerr)
		return
	}
	s.Respond(r, api.StreamCreateResponse{Response: api.Response{Type: typ}, StreamInfo: info}, false)
}

// streamInfo serves STREAM.INFO.<name>, with optional deleted details and
// a subjects_filter that lists per-subject counts (paged by offset). Its
// errors carry the fields of a StreamInfoResponse, as nats-server's do.
func (s *Server) streamInfo(r *Request) {
	const typ = api.TypeStreamInfo
	var req api.StreamInfoRequest
	if aerr := Decode(r.Data, &req); aerr != nil {
		s.Respond(r, api.StreamInfoResponse{Response: api.Response{Type: typ, Error: aerr}}, true)
		return
	}
	info, paged, aerr := s.ops.StreamInfo(StreamArg(r), req)
	if aerr != nil {
		s.Respond(r, api.StreamInfoResponse{Response: api.Response{Type: typ, Error: aerr}}, true)
		return
	}
	s.Respond(r, api.StreamInfoResponse{Response: api.Response{Type: typ}, Paged: paged, StreamInfo: info}, false)
}

// streamDelete serves STREAM.DELETE.<name>; its body must be empty.
func (s *Server) streamDelete(r *Request) {
	const typ = api.TypeStreamDelete
	if !IsEmpty(r.Data) {
		s.RespondError(r, typ, api.NewError(api.ErrNotEmptyRequest))
		return
	}
	if aerr := s.ops.DeleteStream(StreamArg(r)); aerr != nil {
		s.RespondError(r, typ, aerr)
		return
	}
	s.Respond(r, api.StreamDeleteResponse{Response: api.Response{Type: typ}, Success: true}, false)
}

// streamPurge serves STREAM.PURGE.<name>: all, or by filter, up to a
// sequence, or keeping the newest N.
func (s *Server) streamPurge(r *Request) {
	const typ = api.TypeStreamPurge
	var req api.StreamPurgeRequest
	if aerr := Decode(r.Data, &req); aerr != nil {
		s.RespondError(r, typ, aerr)
		return
	}
	purged, aerr := s.ops.PurgeStream(StreamArg(r), req)
	if aerr != nil {
		s.RespondError(r, typ, aerr)
		return
	}
	s.Respond(r, api.StreamPurgeResponse{Response: api.Response{Type: typ}, Success: true, Purged: purged}, false)
}

// streamNames serves STREAM.NAMES.
func (s *Server) streamNames(r *Request) {
	const typ = api.TypeStreamNames
	var req api.StreamNamesRequest
	if aerr := Decode(r.Data, &req); aerr != nil {
		s.RespondError(r, typ, aerr)
		return
	}
	names, paged, aerr := s.ops.StreamNamesPage(req)
	if aerr != nil {
		s.RespondError(r, typ, aerr)
		return
	}
	s.Respond(r, api.StreamNamesResponse{Response: api.Response{Type: typ}, Paged: paged, Streams: names}, false)
}

// streamList serves STREAM.LIST: infos without the server metadata keys,
// as nats-server lists them.
func (s *Server) streamList(r *Request) {
	const typ = api.TypeStreamList
	var req api.StreamNamesRequest
	if aerr := Decode(r.Data, &req); aerr != nil {
		s.RespondError(r, typ, aerr)
		return
	}
	infos, paged, aerr := s.ops.StreamListPage(req)
	if aerr != nil {
		s.RespondError(r, typ, aerr)
		return
	}
	s.Respond(r, api.StreamListResponse{Response: api.Response{Type: typ}, Paged: paged, Streams: infos}, false)
}
