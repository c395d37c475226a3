package apiserver

import (
	"strings"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/validate"
)

func (s *Server) registerSnapshot() {
	s.Register("STREAM.SNAPSHOT", Mgmt, s.streamSnapshot)
	s.Register("STREAM.RESTORE", Mgmt, s.streamRestore)
}

// streamSnapshot serves STREAM.SNAPSHOT.<name>: it answers with the
// stream's config and state at the snapshot's point in time; then the
// operation's start sends the archive in chunks to deliver_subject.
func (s *Server) streamSnapshot(r *Request) {
	const typ = api.TypeStreamSnapshot
	if IsEmpty(r.Data) {
		s.RespondError(r, typ, api.NewError(api.ErrBadRequest))
		return
	}
	var req api.StreamSnapshotRequest
	bodyErr := Decode(r.Data, &req)
	cfg, state, start, aerr := s.ops.SnapshotStream(StreamArg(r), req, bodyErr, r.Client)
	if aerr != nil {
		s.RespondError(r, typ, aerr)
		return
	}
	s.Respond(r, api.StreamSnapshotResponse{Response: api.Response{Type: typ}, Config: cfg, State: state}, false)
	start()
}

// streamRestore serves STREAM.RESTORE.<name>: it checks the config and
// answers with the subject to send the archive's chunks to; then the
// operation's start builds the stream from them.
func (s *Server) streamRestore(r *Request) {
	const typ = api.TypeStreamRestore
	name := StreamArg(r)
	if name == "" {
		s.RespondError(r, typ, api.NewError(api.ErrBadRequest))
		return
	}
	var req api.StreamRestoreRequest
	if IsEmpty(r.Data) {
		s.RespondError(r, typ, api.Errorf(api.ErrInvalidJSON, "invalid JSON: request body is empty"))
		return
	}
	if aerr := Decode(r.Data, &req); aerr != nil {
		s.RespondError(r, typ, aerr)
		return
	}
	if req.Config.Name == "" {
		req.Config.Name = name
	}
	if req.Config.Name != name {
		s.RespondError(r, typ, api.NewError(api.ErrStreamNameMismatch))
		return
	}
	if strings.ContainsAny(name, `/\`) {
		s.RespondError(r, typ, api.NewError(api.ErrStreamNamePathSeparators))
		return
	}
	cfg, aerr := validate.Stream(&req.Config)
	if aerr != nil {
		s.RespondError(r, typ, aerr)
		return
	}
	subj, start, aerr := s.ops.RestoreStream(cfg, r.Client)
	if aerr != nil {
		s.RespondError(r, typ, aerr)
		return
	}
	s.Respond(r, api.StreamRestoreResponse{Response: api.Response{Type: typ}, DeliverSubject: subj}, false)
	start()
}
