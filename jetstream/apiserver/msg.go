package apiserver

import "github.com/jetwal/jetwal/jetstream/api"

func (s *Server) registerMsg() {
	s.Register("STREAM.MSG.GET", Gets, s.msgGet)
	s.Register("STREAM.MSG.DELETE", Mgmt, s.msgDelete)
}

// msgGet serves STREAM.MSG.GET.<name>.
func (s *Server) msgGet(r *Request) {
	const typ = api.TypeMsgGet
	var req api.MsgGetRequest
	if !s.decodeBody(r, typ, &req, bodyRequired) {
		return
	}
	sm, aerr := s.ops.GetMsg(StreamArg(r), &req)
	if aerr != nil {
		s.RespondError(r, typ, aerr)
		return
	}
	s.Respond(r, api.MsgGetResponse{Response: api.Response{Type: typ}, Message: sm}, false)
}

// msgDelete serves STREAM.MSG.DELETE.<name>; the message is erased
// (overwritten) unless no_erase is set.
func (s *Server) msgDelete(r *Request) {
	const typ = api.TypeMsgDelete
	var req api.MsgDeleteRequest
	if !s.decodeBody(r, typ, &req, bodyRequired) {
		return
	}
	if aerr := s.ops.DeleteMsg(StreamArg(r), req); aerr != nil {
		s.RespondError(r, typ, aerr)
		return
	}
	s.Respond(r, api.MsgDeleteResponse{Response: api.Response{Type: typ}, Success: true}, false)
}
