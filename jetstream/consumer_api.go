package jetstream

import (
	"strings"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/validate"
	"github.com/jetwal/jetwal/natshdr"
	"github.com/jetwal/jetwal/server"
)

// apiCreate serves CONSUMER.CREATE.<stream>[.<name>[.<filter>]].
func (cm *consumerManager) apiCreate(r *apiRequest) {
	parts := strings.SplitN(r.args, ".", 3)
	stream, name, filter := parts[0], "", ""
	if len(parts) > 1 {
		name = parts[1]
	}
	if len(parts) > 2 {
		filter = parts[2]
	}
	cm.create(r, stream, name, filter, false)
}

// apiDurableCreate serves the older CONSUMER.DURABLE.CREATE.<stream>.<durable>.
func (cm *consumerManager) apiDurableCreate(r *apiRequest) {
	parts := strings.Split(r.args, ".")
	if len(parts) != 2 {
		cm.js.respondError(r, api.TypeConsumerCreate, api.NewError(api.ErrConsumerBadDurableName))
		return
	}
	cm.create(r, parts[0], parts[1], "", true)
}

func (cm *consumerManager) create(r *apiRequest, streamName, subjName, subjFilter string, durableAPI bool) {
	const typ = api.TypeConsumerCreate
	fail := func(e *api.ApiError) { cm.js.respondError(r, typ, e) }
	var req api.CreateConsumerRequest
	if aerr := decodeRequest(r.data, &req); aerr != nil {
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
	// As nats-server: replicas are refused before the stream is looked up.
	if aerr := validate.Replicas(cfg.Replicas); aerr != nil && !cm.js.clustered() {
		fail(aerr)
		return
	}
	s := cm.js.lookup(streamName)
	if s == nil {
		fail(api.NewError(api.ErrStreamNotFound))
		return
	}
	scfg := s.config()
	if aerr := checkConsumerReplicas(&cfg, &scfg); aerr != nil {
		fail(aerr)
		return
	}
	req.Config = &cfg
	info, aerr := s.addConsumer(req)
	if aerr != nil {
		fail(aerr)
		return
	}
	cm.js.respond(r, api.ConsumerInfoResponse{Response: api.Response{Type: typ}, ConsumerInfo: info}, false)
}

// consumerArgs splits "<stream>.<consumer>" and looks both up.
func (cm *consumerManager) consumerArgs(r *apiRequest) (*stream, *consumer, *api.ApiError) {
	i := strings.IndexByte(r.args, '.')
	if i <= 0 || strings.IndexByte(r.args[i+1:], '.') >= 0 {
		return nil, nil, api.NewError(api.ErrConsumerNotFound)
	}
	s := cm.js.lookup(r.args[:i])
	if s == nil {
		return nil, nil, api.NewError(api.ErrStreamNotFound)
	}
	c := s.cons.get(r.args[i+1:])
	if c == nil {
		return s, nil, api.NewError(api.ErrConsumerNotFound)
	}
	return s, c, nil
}

// apiInfo serves CONSUMER.INFO.<stream>.<consumer>.
func (cm *consumerManager) apiInfo(r *apiRequest) {
	const typ = api.TypeConsumerInfo
	_, c, aerr := cm.consumerArgs(r)
	if aerr != nil {
		cm.js.respondError(r, typ, aerr)
		return
	}
	cm.js.respond(r, api.ConsumerInfoResponse{Response: api.Response{Type: typ}, ConsumerInfo: c.info(true)}, false)
}

// apiDelete serves CONSUMER.DELETE.<stream>.<consumer>.
func (cm *consumerManager) apiDelete(r *apiRequest) {
	const typ = api.TypeConsumerDelete
	s, c, aerr := cm.consumerArgs(r)
	if aerr != nil {
		cm.js.respondError(r, typ, aerr)
		return
	}
	if aerr := s.deleteConsumer(c.name); aerr != nil {
		cm.js.respondError(r, typ, aerr)
		return
	}
	cm.js.respond(r, api.ConsumerDeleteResponse{Response: api.Response{Type: typ}, Success: true}, false)
}

// apiNames serves CONSUMER.NAMES.<stream>.
func (cm *consumerManager) apiNames(r *apiRequest) {
	const typ = api.TypeConsumerNames
	var req api.PagedRequest
	s := cm.js.streamRequest(r, typ, &req, bodyOptional)
	if s == nil {
		return
	}
	off := max(req.Offset, 0)
	all := s.cons.all()
	resp := api.ConsumerNamesResponse{Response: api.Response{Type: typ},
		Paged: api.Paged{Total: len(all), Offset: off, Limit: api.NamesLimit}, Consumers: []string{}}
	from, to := page(len(all), off, api.NamesLimit)
	resp.Paged.Offset = from
	for _, c := range all[from:to] {
		resp.Consumers = append(resp.Consumers, c.name)
	}
	cm.js.respond(r, resp, false)
}

// apiList serves CONSUMER.LIST.<stream>.
func (cm *consumerManager) apiList(r *apiRequest) {
	const typ = api.TypeConsumerList
	var req api.PagedRequest
	s := cm.js.streamRequest(r, typ, &req, bodyOptional)
	if s == nil {
		return
	}
	off := max(req.Offset, 0)
	all := s.cons.all()
	resp := api.ConsumerListResponse{Response: api.Response{Type: typ},
		Paged: api.Paged{Total: len(all), Offset: off, Limit: api.ListLimit}, Consumers: []*api.ConsumerInfo{}}
	from, to := page(len(all), off, api.ListLimit)
	resp.Paged.Offset = from
	for _, c := range all[from:to] {
		resp.Consumers = append(resp.Consumers, c.info(false))
	}
	cm.js.respond(r, resp, false)
}

// nextOp is the CONSUMER.MSG.NEXT operation (after $JS.API.).
const nextOp = "CONSUMER.MSG.NEXT"

// handleNext serves CONSUMER.MSG.NEXT.<stream>.<consumer> on the
// requester's goroutine: the request joins the consumer's waiting list (or
// is refused with a status message) and the consumer's goroutine delivers.
func (cm *consumerManager) handleNext(m *server.Msg) {
	args := strings.TrimPrefix(m.Subject, api.Prefix+nextOp+".")
	i := strings.IndexByte(args, '.')
	if i <= 0 || m.Reply == "" {
		return
	}
	var c *consumer
	if s := cm.js.lookup(args[:i]); s != nil {
		c = s.cons.get(args[i+1:])
	}
	if c == nil && cm.js.cl != nil && !cm.js.servesStream(args[:i]) {
		return // the server serving the stream answers
	}
	if c == nil {
		// nats-server has no responder for a missing consumer.
		cm.js.srv.Publish(m.Reply, "", natshdr.Status(503, ""), nil)
		return
	}
	if len(m.Header) > 0 && levelTooLow(m.Header) && !c.isPush() {
		// As nats-server: after the push-based refusal, before the body.
		cm.js.srv.Publish(m.Reply, "", hdrLevelTooLow, nil)
		return
	}
	c.addRequest(strings.Clone(m.Reply), m.Data)
}
