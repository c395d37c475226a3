package apiserver

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/validate"
)

func (s *Server) registerConsumer() {
	s.Register("CONSUMER.CREATE", Mgmt, s.consumerCreate)
	s.Register("CONSUMER.DURABLE.CREATE", Mgmt, s.consumerDurableCreate)
	s.Register("CONSUMER.INFO", Mgmt, s.consumerInfo)
	s.Register("CONSUMER.DELETE", Mgmt, s.consumerDelete)
	s.Register("CONSUMER.NAMES", Mgmt, s.consumerNames)
	s.Register("CONSUMER.LIST", Mgmt, s.consumerList)
	s.Register("CONSUMER.PAUSE", Mgmt, s.consumerPause)
	s.Register("CONSUMER.UNPIN", Mgmt, s.consumerUnpin)
	s.Register("CONSUMER.RESET", Mgmt, s.consumerReset)
}

// consumerCreate serves CONSUMER.CREATE.<stream>[.<name>[.<filter>]].
func (s *Server) consumerCreate(r *Request) {
	parts := strings.SplitN(r.Args, ".", 3)
	stream, name, filter := parts[0], "", ""
	if len(parts) > 1 {
		name = parts[1]
	}
	if len(parts) > 2 {
		filter = parts[2]
	}
	s.createConsumer(r, stream, name, filter, false)
}

// consumerDurableCreate serves the older
// CONSUMER.DURABLE.CREATE.<stream>.<durable>.
func (s *Server) consumerDurableCreate(r *Request) {
	parts := strings.Split(r.Args, ".")
	if len(parts) != 2 {
		s.RespondError(r, api.TypeConsumerCreate, api.NewError(api.ErrConsumerBadDurableName))
		return
	}
	s.createConsumer(r, parts[0], parts[1], "", true)
}

// createConsumer checks a create request against the names and filter of
// its subject and hands its config to Ops.CreateConsumer.
func (s *Server) createConsumer(r *Request, streamName, subjName, subjFilter string, durableAPI bool) {
	const typ = api.TypeConsumerCreate
	fail := func(e *api.ApiError) { s.RespondError(r, typ, e) }
	var req api.CreateConsumerRequest
	if aerr := Decode(r.Data, &req); aerr != nil {
		fail(aerr)
		return
	}
	if req.Config == nil {
		fail(api.NewError(api.ErrConsumerConfigRequired))
		return
	}
	if req.Stream != "" && req.Stream != streamName {
		fail(api.NewError(api.ErrStreamNameMismatch))
		return
	}
	cfg := req.Config.Clone()
	switch {
	case durableAPI:
		if cfg.Durable == "" {
			cfg.Durable = subjName
		}
		if cfg.Durable != subjName {
			fail(api.NewError(api.ErrConsumerDurableNameNotMatch))
			return
		}
	case subjName != "":
		if cfg.Name == "" && cfg.Durable == "" {
			cfg.Name = subjName
		}
		if (cfg.Name != "" && cfg.Name != subjName) || (cfg.Durable != "" && cfg.Durable != subjName) {
			fail(api.NewError(api.ErrConsumerDurableNameNotMatch))
			return
		}
	}
	if subjFilter != "" {
		ok := cfg.FilterSubject == subjFilter ||
			(cfg.FilterSubject == "" && len(cfg.FilterSubjects) == 1 && cfg.FilterSubjects[0] == subjFilter)
		if !ok {
			fail(api.NewError(api.ErrConsumerFilterMismatch))
			return
		}
	}
	req.Config = &cfg
	info, aerr := s.ops.CreateConsumer(streamName, req)
	if aerr != nil {
		fail(aerr)
		return
	}
	s.Respond(r, api.ConsumerInfoResponse{Response: api.Response{Type: typ}, ConsumerInfo: info}, false)
}

// consumerArgs splits the args "<stream>.<consumer>"; ok is false when
// they are not two tokens (the consumer may be empty).
func consumerArgs(r *Request) (stream, consumer string, ok bool) {
	i := strings.IndexByte(r.Args, '.')
	if i <= 0 || strings.IndexByte(r.Args[i+1:], '.') >= 0 {
		return "", "", false
	}
	return r.Args[:i], r.Args[i+1:], true
}

// namedConsumerArgs is consumerArgs for the operations nats-server serves
// as $JS.API.CONSUMER.<op>.*.* only: ok is false for an empty consumer
// too.
func namedConsumerArgs(r *Request) (stream, consumer string, ok bool) {
	stream, consumer, ok = consumerArgs(r)
	return stream, consumer, ok && consumer != ""
}

// refuseUnknown answers a request of a form nats-server leaves unanswered
// as for an unknown request.
func (s *Server) refuseUnknown(r *Request) {
	s.RespondError(r, api.TypeError, api.Errorf(api.ErrBadRequest, "unknown JetStream API request %q", r.Subject))
}

// consumerInfo serves CONSUMER.INFO.<stream>.<consumer>.
func (s *Server) consumerInfo(r *Request) {
	const typ = api.TypeConsumerInfo
	stream, consumer, ok := consumerArgs(r)
	if !ok {
		s.RespondError(r, typ, api.NewError(api.ErrConsumerNotFound))
		return
	}
	info, aerr := s.ops.ConsumerInfo(stream, consumer)
	if aerr != nil {
		s.RespondError(r, typ, aerr)
		return
	}
	s.Respond(r, api.ConsumerInfoResponse{Response: api.Response{Type: typ}, ConsumerInfo: info}, false)
}

// consumerDelete serves CONSUMER.DELETE.<stream>.<consumer>.
func (s *Server) consumerDelete(r *Request) {
	const typ = api.TypeConsumerDelete
	stream, consumer, ok := consumerArgs(r)
	if !ok {
		s.RespondError(r, typ, api.NewError(api.ErrConsumerNotFound))
		return
	}
	if aerr := s.ops.DeleteConsumer(stream, consumer); aerr != nil {
		s.RespondError(r, typ, aerr)
		return
	}
	s.Respond(r, api.ConsumerDeleteResponse{Response: api.Response{Type: typ}, Success: true}, false)
}

// consumerNames serves CONSUMER.NAMES.<stream>.
func (s *Server) consumerNames(r *Request) {
	const typ = api.TypeConsumerNames
	var req api.PagedRequest
	if !s.decodeBody(r, typ, &req, bodyOptional) {
		return
	}
	names, paged, aerr := s.ops.ConsumerNamesPage(StreamArg(r), req)
	if aerr != nil {
		s.RespondError(r, typ, aerr)
		return
	}
	s.Respond(r, api.ConsumerNamesResponse{Response: api.Response{Type: typ}, Paged: paged, Consumers: names}, false)
}

// consumerList serves CONSUMER.LIST.<stream>.
func (s *Server) consumerList(r *Request) {
	const typ = api.TypeConsumerList
	var req api.PagedRequest
	if !s.decodeBody(r, typ, &req, bodyOptional) {
		return
	}
	infos, paged, aerr := s.ops.ConsumerListPage(StreamArg(r), req)
	if aerr != nil {
		s.RespondError(r, typ, aerr)
		return
	}
	s.Respond(r, api.ConsumerListResponse{Response: api.Response{Type: typ}, Paged: paged, Consumers: infos}, false)
}

// consumerPause serves CONSUMER.PAUSE.<stream>.<consumer>: {"pause_until":
// time} pauses until then, an empty body or a zero time resumes.
func (s *Server) consumerPause(r *Request) {
	const typ = api.TypeConsumerPause
	// Errors carry the response's other fields too, as nats-server's do.
	fail := func(aerr *api.ApiError) {
		s.Respond(r, api.ConsumerPauseResponse{Response: api.Response{Type: typ, Error: aerr}}, true)
	}
	stream, consumer, ok := namedConsumerArgs(r)
	if !ok {
		// nats-server serves $JS.API.CONSUMER.PAUSE.*.* only and leaves
		// other forms unanswered; jetwal answers as for an unknown request.
		s.refuseUnknown(r)
		return
	}
	var req api.ConsumerPauseRequest
	if b := strings.TrimSpace(string(r.Data)); strings.HasPrefix(b, "{") || strings.HasPrefix(b, "[") {
		if err := json.Unmarshal(r.Data, &req); err != nil {
			fail(api.Errorf(api.ErrInvalidJSON, "invalid JSON: %v", err))
			return
		}
	}
	until := req.PauseUntil.UTC()
	paused, remaining, aerr := s.ops.PauseConsumer(stream, consumer, until)
	if aerr != nil {
		fail(aerr)
		return
	}
	s.Respond(r, api.ConsumerPauseResponse{Response: api.Response{Type: typ}, PauseUntil: until,
		Paused: paused, PauseRemaining: remaining}, false)
}

// consumerUnpin serves CONSUMER.UNPIN.<stream>.<consumer> {"group": name},
// checked as nats-server checks it.
func (s *Server) consumerUnpin(r *Request) {
	const typ = api.TypeConsumerUnpin
	fail := func(aerr *api.ApiError) { s.RespondError(r, typ, aerr) }
	stream, consumer, ok := namedConsumerArgs(r)
	if !ok {
		s.refuseUnknown(r)
		return
	}
	var req api.ConsumerUnpinRequest
	if err := json.Unmarshal(r.Data, &req); err != nil {
		fail(api.Errorf(api.ErrInvalidJSON, "invalid JSON: %v", err))
		return
	}
	if req.Group == "" {
		fail(api.Errorf(api.ErrInvalidJSON, "invalid JSON: %v", errors.New("consumer group not specified")))
		return
	}
	if !validate.ValidGroupName.MatchString(req.Group) {
		fail(api.NewError(api.ErrConsumerInvalidGroupName))
		return
	}
	if aerr := s.ops.UnpinConsumer(stream, consumer, req.Group); aerr != nil {
		fail(aerr)
		return
	}
	s.Respond(r, api.Response{Type: typ}, false)
}

// consumerReset serves CONSUMER.RESET.<stream>.<consumer>: an empty body
// (or seq 0) moves the consumer back to its ack floor + 1, {"seq": N} to
// stream sequence N.
func (s *Server) consumerReset(r *Request) {
	const typ = api.TypeConsumerReset
	fail := func(aerr *api.ApiError) {
		s.Respond(r, api.ConsumerResetResponse{Response: api.Response{Type: typ, Error: aerr}}, true)
	}
	var req api.ConsumerResetRequest
	if len(r.Data) > 0 {
		if err := json.Unmarshal(r.Data, &req); err != nil {
			fail(api.Errorf(api.ErrInvalidJSON, "invalid JSON: %v", err))
			return
		}
	}
	stream, consumer, ok := consumerArgs(r)
	if !ok {
		fail(api.NewError(api.ErrConsumerNotFound))
		return
	}
	info, seq, aerr := s.ops.ResetConsumer(stream, consumer, req.Seq)
	if aerr != nil {
		fail(aerr)
		return
	}
	s.Respond(r, api.ConsumerResetResponse{Response: api.Response{Type: typ}, ConsumerInfo: info, ResetSeq: seq}, false)
}
