package jetstream

import "github.com/jetwal/jetwal/jetstream/api"

// GetMsg reads the message of the stream name that req selects
// (apiserver.MsgOps).
func (js *JetStream) GetMsg(name string, req *api.MsgGetRequest) (*api.StoredMsg, *api.ApiError) {
	s := js.lookup(name)
	if s == nil {
		return nil, api.NewError(api.ErrStreamNotFound)
	}
	return s.getMsg(req)
}

// DeleteMsg removes a message of the stream name; it is erased
// (overwritten) unless req sets no_erase (apiserver.MsgOps).
func (js *JetStream) DeleteMsg(name string, req api.MsgDeleteRequest) *api.ApiError {
	s := js.lookup(name)
	if s == nil {
		return api.NewError(api.ErrStreamNotFound)
	}
	return s.deleteMsg(req)
}
