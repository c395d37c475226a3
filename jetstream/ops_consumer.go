package jetstream

import (
	"slices"
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/validate"
)

// CreateConsumer creates or updates a consumer of the stream streamName
// with the config of req, checked against its subject's names
// (apiserver.ConsumerOps).
func (js *JetStream) CreateConsumer(streamName string, req api.CreateConsumerRequest) (*api.ConsumerInfo, *api.ApiError) {
	// As nats-server: replicas are refused before the stream is looked up.
	if aerr := validate.Replicas(req.Config.Replicas); aerr != nil && !js.clustered() {
		return nil, aerr
	}
	s := js.lookup(streamName)
	if s == nil {
		return nil, api.NewError(api.ErrStreamNotFound)
	}
	scfg := s.config()
	if aerr := checkConsumerReplicas(req.Config, &scfg); aerr != nil {
		return nil, aerr
	}
	return s.addConsumer(req)
}

// consumerOf looks up the consumer name of the stream streamName.
func (js *JetStream) consumerOf(streamName, name string) (*stream, *consumer, *api.ApiError) {
	s := js.lookup(streamName)
	if s == nil {
		return nil, nil, api.NewError(api.ErrStreamNotFound)
	}
	c := s.cons.get(name)
	if c == nil {
		return s, nil, api.NewError(api.ErrConsumerNotFound)
	}
	return s, c, nil
}

// ConsumerInfo describes a consumer (apiserver.ConsumerOps).
func (js *JetStream) ConsumerInfo(streamName, name string) (*api.ConsumerInfo, *api.ApiError) {
	_, c, aerr := js.consumerOf(streamName, name)
	if aerr != nil {
		return nil, aerr
	}
	return c.info(true), nil
}

// DeleteConsumer deletes a consumer (apiserver.ConsumerOps).
func (js *JetStream) DeleteConsumer(streamName, name string) *api.ApiError {
	s, c, aerr := js.consumerOf(streamName, name)
	if aerr != nil {
		return aerr
	}
	return s.deleteConsumer(c.name)
}

// ConsumerNamesPage lists the names of a stream's consumers, one page
// (never nil; apiserver.ConsumerOps).
func (js *JetStream) ConsumerNamesPage(streamName string, req api.PagedRequest) ([]string, api.Paged, *api.ApiError) {
	s := js.lookup(streamName)
	if s == nil {
		return nil, api.Paged{}, api.NewError(api.ErrStreamNotFound)
	}
	all := s.cons.all()
	from, to := page(len(all), max(req.Offset, 0), api.NamesLimit)
	names := []string{}
	for _, c := range all[from:to] {
		names = append(names, c.name)
	}
	return names, api.Paged{Total: len(all), Offset: from, Limit: api.NamesLimit}, nil
}

// ConsumerListPage lists the infos of a stream's consumers, one page
// (never nil; apiserver.ConsumerOps).
func (js *JetStream) ConsumerListPage(streamName string, req api.PagedRequest) ([]*api.ConsumerInfo, api.Paged, *api.ApiError) {
	s := js.lookup(streamName)
	if s == nil {
		return nil, api.Paged{}, api.NewError(api.ErrStreamNotFound)
	}
	all := s.cons.all()
	from, to := page(len(all), max(req.Offset, 0), api.ListLimit)
	infos := []*api.ConsumerInfo{}
	for _, c := range all[from:to] {
		infos = append(infos, c.info(false))
	}
	return infos, api.Paged{Total: len(all), Offset: from, Limit: api.ListLimit}, nil
}

// PauseConsumer pauses a consumer until the given time (zero: resumes it)
// and returns the pause's state as of now (apiserver.ConsumerOps).
func (js *JetStream) PauseConsumer(streamName, name string, until time.Time) (paused bool, remaining time.Duration, aerr *api.ApiError) {
	_, c, aerr := js.consumerOf(streamName, name)
	if aerr != nil {
		return false, 0, aerr
	}
	if err := c.setPause(until); err != nil {
		return false, 0, api.Errorf(api.ErrConsumerStoreFailed, "error creating store for consumer: %v", err)
	}
	paused, remaining = pauseInfo(&until, time.Now())
	return paused, remaining, nil
}

// UnpinConsumer takes the pin from the pinned client of a consumer's
// priority group: an unpinned advisory (reason "admin") goes out, and the
// next pull request without a pin id gets a new one
// (apiserver.ConsumerOps).
func (js *JetStream) UnpinConsumer(streamName, name, group string) *api.ApiError {
	_, c, aerr := js.consumerOf(streamName, name)
	if aerr != nil {
		return aerr
	}
	c.mu.Lock()
	if !slices.Contains(c.prio.groups, group) {
		c.mu.Unlock()
		return api.NewError(api.ErrConsumerInvalidPriorityGroup)
	}
	c.unpin("admin")
	events := c.takePinEvents()
	c.mu.Unlock()
	c.advisePins(events)
	c.signal()
	return nil
}

// ResetConsumer moves a consumer back to its ack floor + 1 (seq 0) or to
// stream sequence seq, durably, and returns its info and the sequence
// delivery restarts at (apiserver.ConsumerOps; consumer_reset.go).
func (js *JetStream) ResetConsumer(streamName, name string, seq uint64) (*api.ConsumerInfo, uint64, *api.ApiError) {
	_, c, aerr := js.consumerOf(streamName, name)
	if aerr != nil {
		return nil, 0, aerr
	}
	at, err := c.reset(seq)
	if err != nil {
		return nil, 0, api.Errorf(api.ErrConsumerInvalidReset, "invalid reset: %v", err)
	}
	if err := js.cons.persistReset(c); err != nil {
		return nil, 0, api.Errorf(api.ErrConsumerStoreFailed, "error creating store for consumer: %v", err)
	}
	c.signal()
	return c.info(true), at, nil
}
