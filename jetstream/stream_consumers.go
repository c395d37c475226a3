package jetstream

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/jetwal/jetwal/consumerstate"
	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/validate"
	"github.com/jetwal/jetwal/subject"
)

// The consumer operations of a stream (see stream_ops.go): adding,
// updating and deleting consumers.

// addConsumer is the create-or-update operation of a create request whose
// config names were reconciled with the request subject: it fills in the
// defaults, checks the config against the stream's, and creates the
// consumer, or returns or updates the existing one as the request's action
// ("", "create", "update") allows. It answers with the consumer's info.
func (s *stream) addConsumer(req api.CreateConsumerRequest) (*api.ConsumerInfo, *api.ApiError) {
	if req.Config == nil {
		return nil, api.NewError(api.ErrConsumerConfigRequired)
	}
	cfg := req.Config.Clone()
	switch {
	case cfg.Name == "" && cfg.Durable != "":
		cfg.Name = cfg.Durable
	case cfg.Name == "":
		cfg.Name = ephemeralName()
	}
	scfg := s.config()
	if req.Pedantic {
		if aerr := validate.PedanticConsumer(&cfg, scfg.ConsumerLimits); aerr != nil {
			return nil, aerr
		}
	}
	accMaxAckPending := s.env.cfg.AccountMaxAckPending
	validate.ConsumerDefaults(&cfg, scfg.ConsumerLimits, accMaxAckPending)
	if aerr := validate.Consumer(&cfg, &scfg, accMaxAckPending); aerr != nil {
		return nil, aerr
	}
	if aerr := s.js.checkConsumerLimit(s, cfg.Name); aerr != nil {
		return nil, aerr
	}
	c, info, aerr := s.createConsumer(cfg, req.Action, &scfg)
	if aerr != nil {
		return nil, aerr
	}
	if info != nil {
		s.js.adviseConsumer(s.name, c.name, api.ActionCreate)
		s.js.recordConsumer(s, cfg)
		return info, nil
	}
	return c.info(true), nil
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
		validate.SetConsumerRequiredLevel(&cfg)
		if sameConsumerConfig(&ocfg, &cfg) {
			return old, nil, nil
		}
		if action == "create" {
			return nil, nil, api.NewError(api.ErrConsumerAlreadyExists)
		}
		if aerr := validate.ConsumerUpdate(&ocfg, &cfg); aerr != nil {
			return nil, nil, aerr
		}
		if scfg.Retention == api.WorkQueueRetention {
			mine := validate.ConsumerFilters(&cfg)
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
		s.env.log.Info("consumer updated", "stream", s.name, "consumer", cfg.Name)
		return old, nil, nil
	}
	if action == "update" {
		return nil, nil, api.NewError(api.ErrConsumerDoesNotExist)
	}
	if scfg.MaxConsumers > 0 && len(s.cons.byName) >= scfg.MaxConsumers {
		return nil, nil, api.NewError(api.ErrMaximumConsumers)
	}
	if scfg.Retention == api.WorkQueueRetention && len(s.cons.byName) > 0 {
		mine := validate.ConsumerFilters(&cfg)
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
		st, err := consumerstate.Open(s.dir+"/"+obsDir, s.js.consumerStoreOptions(s.files.dk))
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
			s.env.log.Error("consumer create", "stream", s.name, "consumer", cfg.Name, "error", err)
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
			s.env.log.Error("consumer create", "stream", s.name, "consumer", cfg.Name, "error", err)
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
	s.env.log.Info("consumer created", "stream", s.name, "consumer", c.name, "durable", cs != nil)
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

// deleteConsumer is the delete operation of a consumer.
func (s *stream) deleteConsumer(name string) *api.ApiError {
	c := s.cons.get(name)
	if c == nil {
		return api.NewError(api.ErrConsumerNotFound)
	}
	if err := s.removeConsumer(c, false); err != nil {
		return api.Errorf(api.ErrConsumerCreate, "deleting consumer: %v", err)
	}
	s.env.log.Info("consumer deleted", "stream", s.name, "consumer", c.name)
	s.js.forgetConsumer(s, c.name)
	return nil
}
