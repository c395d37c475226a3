package jetstream

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/jetwal/jetwal/consumerstate"
	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/natshdr"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/subject"
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
	if aerr := checkReplicas(cfg.Replicas); aerr != nil && !cm.js.clustered() {
		fail(aerr)
		return
	}
	s := cm.js.lookup(streamName)
	if s == nil {
		fail(api.NewError(api.ErrStreamNotFound))
		return
	}
	switch {
	case cfg.Name == "" && cfg.Durable != "":
		cfg.Name = cfg.Durable
	case cfg.Name == "":
		cfg.Name = ephemeralName()
	}
	scfg := s.config()
	if req.Pedantic {
		if aerr := pedanticConsumer(&cfg, scfg.ConsumerLimits); aerr != nil {
			fail(aerr)
			return
		}
	}
	consumerDefaults(&cfg, scfg.ConsumerLimits)
	if aerr := checkConsumerConfig(&cfg, &scfg); aerr != nil {
		fail(aerr)
		return
	}
	if aerr := cm.js.checkConsumerLimit(s, cfg.Name); aerr != nil {
		fail(aerr)
		return
	}
	c, info, aerr := s.createConsumer(cfg, req.Action, &scfg)
	if aerr != nil {
		fail(aerr)
		return
	}
	if info != nil {
		cm.js.adviseConsumer(s.name, c.name, api.ActionCreate)
		cm.js.recordConsumer(s, cfg)
	} else {
		info = c.info(true)
	}
	cm.js.respond(r, api.ConsumerInfoResponse{Response: api.Response{Type: typ}, ConsumerInfo: info}, false)
}

// createConsumer adds a consumer, or returns or updates the existing one
// of the same name as action ("", "create", "update") allows. info is the
// new consumer's info as created (nil when it already existed).
func (s *stream) createConsumer(cfg api.ConsumerConfig, action string, scfg *api.StreamConfig) (c *consumer, info *api.ConsumerInfo, aerr *api.ApiError) {
	s.cons.mu.Lock()
	defer s.cons.mu.Unlock()
	if s.cons.closed {
		return nil, nil, api.NewError(api.ErrStreamNotFound)
	}
	if old := s.cons.byName[cfg.Name]; old != nil {
		old.mu.Lock()
		ocfg := old.cfg.Clone()
		old.mu.Unlock()
		// As nats-server: only CONSUMER.PAUSE changes a pause.
		cfg.PauseUntil = ocfg.PauseUntil
		setConsumerRequiredLevel(&cfg)
		if sameConsumerConfig(&ocfg, &cfg) {
			return old, nil, nil
		}
		if action == "create" {
			return nil, nil, api.NewError(api.ErrConsumerAlreadyExists)
		}
		if aerr := checkConsumerUpdate(&ocfg, &cfg); aerr != nil {
			return nil, nil, aerr
		}
		if scfg.Retention == api.WorkQueueRetention {
			mine := consumerFilters(&cfg)
			for _, o := range s.cons.byName {
				if o != old && !disjointFilters(mine, o.filtersCopy()) {
					return nil, nil, api.NewError(api.ErrConsumerWQNotUnique)
				}
			}
		}
		if old.cs != nil {
			m := old.meta()
			m.Config = cfg
			meta, _ := json.Marshal(m)
			if err := old.cs.UpdateConfig(meta); err != nil {
				return nil, nil, api.Errorf(api.ErrConsumerCreate, "consumer update: %v", err)
			}
		}
		old.mu.Lock()
		old.setConfig(cfg)
		old.dueAt = 1
		old.mu.Unlock()
		old.signal()
		s.js.log.Info("consumer updated", "stream", s.name, "consumer", cfg.Name)
		return old, nil, nil
	}
	if action == "update" {
		return nil, nil, api.NewError(api.ErrConsumerDoesNotExist)
	}
	if scfg.MaxConsumers > 0 && len(s.cons.byName) >= scfg.MaxConsumers {
		return nil, nil, api.NewError(api.ErrMaximumConsumers)
	}
	if scfg.Retention == api.WorkQueueRetention && len(s.cons.byName) > 0 {
		mine := consumerFilters(&cfg)
		if len(mine) == 0 {
			return nil, nil, api.NewError(api.ErrConsumerWQMultipleUnfiltered)
		}
		for _, o := range s.cons.byName {
			if !disjointFilters(mine, o.filtersCopy()) {
				return nil, nil, api.NewError(api.ErrConsumerWQNotUnique)
			}
		}
	}
	if s.dir != "" && s.cons.obs == nil {
		st, err := consumerstate.Open(s.dir+"/"+obsDir, s.js.consumerStoreOptions())
		if err != nil {
			return nil, nil, api.Errorf(api.ErrConsumerCreate, "opening consumer store: %v", err)
		}
		s.cons.obs = st
	}
	createdAt := time.Now().UTC()
	var cs *consumerstate.Consumer
	if s.cons.obs != nil && cfg.Durable != "" && !cfg.MemoryStorage {
		meta, _ := json.Marshal(consumerMeta{Created: createdAt, Config: cfg})
		var err error
		if cs, err = s.cons.obs.Create(cfg.Name, meta); err != nil {
			s.js.log.Error("consumer create", "stream", s.name, "consumer", cfg.Name, "error", err)
			return nil, nil, api.Errorf(api.ErrConsumerCreate, "creating consumer state: %v", err)
		}
	}
	c = newConsumer(s, cfg.Name, cfg, createdAt, cs)
	c.mu.Lock()
	c.position()
	c.mu.Unlock()
	if cs != nil && len(c.lpsAll) > 0 {
		meta, _ := json.Marshal(c.meta())
		if err := cs.UpdateConfig(meta); err != nil {
			s.js.log.Error("consumer create", "stream", s.name, "consumer", cfg.Name, "error", err)
		}
	}
	if s.cons.byName == nil {
		s.cons.byName = make(map[string]*consumer)
	}
	s.cons.byName[c.name] = c
	s.cons.publishLocked()
	if c.push {
		s.js.cons.trackPush(c, true)
	}
	// The create response shows the consumer as created, before it
	// delivers anything (as nats-server's does).
	info = c.info(true)
	go c.run()
	c.signal()
	s.js.log.Info("consumer created", "stream", s.name, "consumer", c.name, "durable", cs != nil)
	return c, info, nil
}

func (c *consumer) filtersCopy() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.filters...)
}

// disjointFilters reports whether two filter sets (empty = everything)
// never match the same subject.
func disjointFilters(a, b []string) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	for _, x := range a {
		for _, y := range b {
			if subject.Overlap(x, y) {
				return false
			}
		}
	}
	return true
}

func sameConsumerConfig(a, b *api.ConsumerConfig) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
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
	if err := s.removeConsumer(c, false); err != nil {
		cm.js.respondError(r, typ, api.Errorf(api.ErrConsumerCreate, "deleting consumer: %v", err))
		return
	}
	s.js.log.Info("consumer deleted", "stream", s.name, "consumer", c.name)
	cm.js.forgetConsumer(s, c.name)
	cm.js.respond(r, api.ConsumerDeleteResponse{Response: api.Response{Type: typ}, Success: true}, false)
}

// pageOf decodes the paging request of NAMES and LIST.
func pageOf(r *apiRequest) (int, *api.ApiError) {
	var req api.PagedRequest
	if aerr := decodeRequest(r.data, &req); aerr != nil {
		return 0, aerr
	}
	return max(req.Offset, 0), nil
}

// apiNames serves CONSUMER.NAMES.<stream>.
func (cm *consumerManager) apiNames(r *apiRequest) {
	const typ = api.TypeConsumerNames
	off, aerr := pageOf(r)
	if aerr != nil {
		cm.js.respondError(r, typ, aerr)
		return
	}
	s := cm.js.lookup(streamArg(r))
	if s == nil {
		cm.js.respondError(r, typ, api.NewError(api.ErrStreamNotFound))
		return
	}
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
	off, aerr := pageOf(r)
	if aerr != nil {
		cm.js.respondError(r, typ, aerr)
		return
	}
	s := cm.js.lookup(streamArg(r))
	if s == nil {
		cm.js.respondError(r, typ, api.NewError(api.ErrStreamNotFound))
		return
	}
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
	c.addRequest(strings.Clone(m.Reply), m.Data)
}
