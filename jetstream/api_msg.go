package jetstream

import (
	"github.com/jetwal/jetwal/jetstream/api"
)

// apiMsgGet serves STREAM.MSG.GET.<name>.
func (js *JetStream) apiMsgGet(r *apiRequest) {
	const typ = api.TypeMsgGet
	var req api.MsgGetRequest
	s := js.streamRequest(r, typ, &req, bodyRequired)
	if s == nil {
		return
	}
	sm, aerr := s.getMsg(&req)
	if aerr != nil {
		js.respondError(r, typ, aerr)
		return
	}
	js.respond(r, api.MsgGetResponse{Response: api.Response{Type: typ}, Message: sm}, false)
}

// apiMsgDelete serves STREAM.MSG.DELETE.<name>; the message is erased
// (overwritten) unless no_erase is set.
func (js *JetStream) apiMsgDelete(r *apiRequest) {
	const typ = api.TypeMsgDelete
	var req api.MsgDeleteRequest
	s := js.streamRequest(r, typ, &req, bodyRequired)
	if s == nil {
		return
	}
	if aerr := s.deleteMsg(req); aerr != nil {
		js.respondError(r, typ, aerr)
		return
	}
	js.respond(r, api.MsgDeleteResponse{Response: api.Response{Type: typ}, Success: true}, false)
}
