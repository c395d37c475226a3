package sysreq

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jetwal/jetwal/monitor"
	"github.com/jetwal/jetwal/server"
)

// Kinds are the request kinds answered, after PING. or <server id>.
var Kinds = []string{"STATSZ", "VARZ", "JSZ", "CONNZ", "HEALTHZ", "SUBSZ", "ROUTEZ", "ACCOUNTZ", "RAFTZ", "IDZ"}

// Options configure a Service.
type Options struct {
	Server *server.Server
	// Account is the system account (required): the server requests are
	// served, and the connection events and statsz broadcasts published,
	// in it alone. The other accounts get the answers nats-server imports
	// into them (imports.go) and $SYS.REQ.USER.INFO.
	Account   *server.Account
	Monitor   *monitor.Monitor // builds the documents (monitor.New or Start)
	JetStream bool             // JetStream is enabled on this server
	Domain    string           // its JetStream domain, if any
	// StatszInterval is the longest time between two statsz broadcasts
	// (heartbeat.go); 0 means nats-server's 10s.
	StatszInterval time.Duration
	Logger         *slog.Logger // nil = discard
}

// Service answers $SYS.REQ.SERVER requests for one server and publishes
// its connection events.
type Service struct {
	opts Options
	acc  *server.Account // Options.Account
	seq  atomic.Uint64
	reqs chan pending
	// Connection events from the server's hook (events.go).
	events chan server.ConnEvent
	done   chan struct{}
	wg     sync.WaitGroup
	subs   []*server.Subscription
	stop   sync.Once
}

type pending struct {
	kind, reply string
	// account is the account of a $SYS.REQ.ACCOUNT.<account>.<kind>
	// request ("PING" for the account ping) or of an imported request;
	// "" for server requests.
	account string
	cid     uint64 // the asking client, 0 when unknown
	body    []byte
	acc     *server.Account // where to answer; nil = the system account
}

// queueLen bounds the requests waiting to be answered; more are dropped
// (the asker times out) rather than blocking a publisher.
const queueLen = 256

// Start subscribes to the request subjects and answers them on a goroutine
// of its own (handlers must not block the publisher).
func Start(o Options) (*Service, error) {
	if o.Server == nil || o.Monitor == nil || o.Account == nil {
		return nil, errors.New("sysreq: a server, a monitor and the system account are required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{opts: o, reqs: make(chan pending, queueLen), events: make(chan server.ConnEvent, queueLen), done: make(chan struct{})}
	s.acc = o.Account
	id := o.Server.ID()
	subscribe := func(subj, kind string) error {
		sub, err := s.acc.Subscribe(subj, "", func(m *server.Msg) { s.enqueue(kind, m) })
		if err != nil {
			return fmt.Errorf("sysreq: subscribe %s: %w", subj, err)
		}
		s.subs = append(s.subs, sub)
		return nil
	}
	if err := subscribe("$SYS.REQ.SERVER.PING", "STATSZ"); err != nil {
		s.Stop()
		return nil, err
	}
	for _, k := range Kinds {
		for _, subj := range []string{"$SYS.REQ.SERVER.PING." + k, "$SYS.REQ.SERVER." + id + "." + k} {
			if err := subscribe(subj, k); err != nil {
				s.Stop()
				return nil, err
			}
		}
	}
	if err := s.subscribeAccounts(); err != nil {
		s.Stop()
		return nil, err
	}
	if err := s.subscribeImports(); err != nil {
		s.Stop()
		return nil, err
	}
	if err := s.subscribeUserInfo(); err != nil {
		s.Stop()
		return nil, err
	}
	s.wg.Add(2)
	go s.loop()
	go s.heartbeat()
	o.Server.SetConnHook(s.connEvent)
	return s, nil
}

// Stop unsubscribes and waits for the answer in progress.
func (s *Service) Stop() {
	s.stop.Do(func() {
		s.opts.Server.SetConnHook(nil)
		for _, sub := range s.subs {
			sub.Unsubscribe()
		}
		close(s.done)
	})
	s.wg.Wait()
}

func (s *Service) enqueue(kind string, m *server.Msg) {
	if m.Reply == "" {
		return // nothing to answer to
	}
	r := pending{kind: kind, reply: m.Reply, body: append([]byte(nil), m.Data...)}
	select {
	case s.reqs <- r:
	default:
		s.opts.Logger.Warn("dropping a system request: too many waiting", "kind", kind)
	}
}

func (s *Service) loop() {
	defer s.wg.Done()
	for {
		select {
		case <-s.done:
			return
		case r := <-s.reqs:
			if r.kind == kindUserInfo {
				s.answerUserInfo(r)
			} else if b := s.answer(r); b != nil {
				acc := r.acc
				if acc == nil {
					acc = s.acc
				}
				acc.Publish(r.reply, "", nil, b)
			}
		case ev := <-s.events:
			s.publishEvent(ev)
		}
	}
}

// answer returns the JSON answer to a request, or nil when this server
// does not answer it (filtered out, or not the one asked for).
func (s *Service) answer(r pending) []byte {
	resp, skip := s.build(r)
	if skip {
		return nil
	}
	b, err := json.Marshal(resp)
	if err != nil {
		b, _ = json.Marshal(&Response{Server: s.info(), Error: &APIError{Code: http.StatusInternalServerError, Description: "encoding the answer: " + err.Error()}})
	}
	return b
}

// errSkip is a handler's "this server does not answer" (nats-server's
// errSkipZreq): not the JetStream leader, or nothing to report.
var errSkip = errors.New("sysreq: no answer from this server")

// handler is one request kind: opts is what the request body decodes into
// (beside the filter; nil when the kind has no options) and run builds the
// data once it is decoded.
type handler struct {
	opts any
	run  func() (any, error)
}

// build makes the answer to r; skip is true when this server stays silent.
// As nats-server's zReq: a body that does not decode is answered with 400,
// a filter that excludes this server with silence, a failure with 500.
func (s *Service) build(r pending) (resp any, skip bool) {
	if r.kind == "IDZ" {
		i := s.info()
		return &ServerID{Name: i.Name, Host: i.Host, ID: i.ID}, false
	}
	h, ok := s.handler(r)
	if !ok {
		return s.fail(http.StatusBadRequest, fmt.Errorf("unknown request %q", r.kind)), false
	}
	if len(r.body) > 0 {
		// The options of the kind, then the filter, with their types checked
		// (nats-server decodes both from the one body, and answers with the
		// decoder's error as it is).
		var err error
		if h.opts != nil {
			err = json.Unmarshal(r.body, h.opts)
		}
		var f filter
		if err == nil {
			err = json.Unmarshal(r.body, &f)
		}
		if err != nil {
			return s.fail(http.StatusBadRequest, err), false
		}
		if !s.matches(&f) {
			return nil, true
		}
	}
	data, err := h.run()
	switch {
	case errors.Is(err, errSkip):
		return nil, true
	case err != nil:
		return s.fail(http.StatusInternalServerError, err), false
	}
	if r.kind == "STATSZ" {
		return data, false // the statsz message is its own envelope
	}
	return &Response{Server: s.info(), Data: data}, false
}

// handler returns the handler of a server request kind, or of an account
// request (account.go).
func (s *Service) handler(r pending) (handler, bool) {
	if r.account != "" {
		return s.accountHandler(r)
	}
	m := s.opts.Monitor
	switch r.kind {
	case "STATSZ":
		return handler{run: func() (any, error) { return s.statsz(), nil }}, true
	case "VARZ":
		return handler{run: func() (any, error) { return m.Varz(), nil }}, true
	case "JSZ":
		var o monitor.JszOptions
		return handler{opts: &o, run: func() (any, error) {
			info, err := m.Jsz(o)
			if errors.Is(err, monitor.ErrNotLeader) {
				return nil, errSkip
			}
			return info, err
		}}, true
	case "CONNZ":
		var o ConnzEventOptions
		return handler{opts: &o, run: func() (any, error) { return m.Connz(o.ConnzOptions) }}, true
	case "HEALTHZ":
		var o monitor.HealthzOptions
		return handler{opts: &o, run: func() (any, error) { return m.Healthz(o), nil }}, true
	case "SUBSZ":
		return handler{run: func() (any, error) { return m.Subsz(), nil }}, true
	case "ROUTEZ":
		var o struct {
			Subs bool `json:"subscriptions"`
		}
		return handler{opts: &o, run: func() (any, error) { return m.Routez(o.Subs), nil }}, true
	case "ACCOUNTZ":
		var o monitor.AccountzOptions
		return handler{opts: &o, run: func() (any, error) { return m.Accountz(o) }}, true
	case "RAFTZ":
		// Without a cluster nats-server answers with no groups: {}.
		var o monitor.RaftzOptions
		return handler{opts: &o, run: func() (any, error) {
			st, _ := m.Raftz(o)
			if st == nil {
				st = monitor.RaftzStatus{}
			}
			return st, nil
		}}, true
	}
	return handler{}, false
}

func (s *Service) fail(code int, err error) *Response {
	return &Response{Server: s.info(), Error: &APIError{Code: code, Description: err.Error()}}
}

// matches applies nats-server's event filter: name, host and cluster by
// substring (or exactly with exact_match), and the JetStream domain.
// Tags must all be among the server's (server_tags), compared as
// nats-server does, lower-cased.
func (s *Service) matches(f *filter) bool {
	if f.Domain != "" && f.Domain != s.opts.Domain {
		return false
	}
	tags := s.opts.Server.Options().Tags
	for _, t := range f.Tags {
		if !slices.Contains(tags, strings.ToLower(strings.TrimSpace(t))) {
			return false
		}
	}
	i := s.info()
	eq := func(want, have string) bool {
		if want == "" {
			return true
		}
		if f.ExactMatch {
			return want == have
		}
		return strings.Contains(have, want)
	}
	return eq(f.Name, i.Name) && eq(f.Host, i.Host) && eq(f.Cluster, i.Cluster)
}

// info is the envelope's server block, with the next sequence number.
func (s *Service) info() *ServerInfo {
	srv := s.opts.Server
	o := srv.Options()
	host := o.Host
	if host == "" {
		host = "0.0.0.0"
	}
	i := &ServerInfo{
		Name: srv.Name(), Host: host, ID: srv.ID(), Cluster: srv.ClusterName(), Version: srv.Version(),
		Domain: s.opts.Domain, Seq: s.seq.Add(1), Time: time.Now().UTC(), Tags: o.Tags,
	}
	if s.opts.JetStream {
		i.JetStream, i.Flags = true, flagJetStream
	}
	return i
}

// statsz builds the ServerStatsMsg from /varz and the routes.
func (s *Service) statsz() *StatsMsg {
	v := s.opts.Monitor.Varz()
	st := ServerStats{
		Start: v.Start, Mem: v.Mem, Cores: v.Cores, CPU: v.CPU, Connections: v.Connections,
		TotalConnections: v.TotalConnections, ActiveAccounts: 1, NumSubs: v.Subscriptions,
		Sent:            DataStats{Msgs: v.OutMsgs, Bytes: v.OutBytes},
		SentToClients:   DataStats{Msgs: v.OutClientMsgs, Bytes: v.OutClientBytes},
		Received:        DataStats{Msgs: v.InMsgs, Bytes: v.InBytes},
		ReceivedClients: DataStats{Msgs: v.InClientMsgs, Bytes: v.InClientBytes},
		SlowConsumers:   v.SlowConsumers, StaleConnections: v.StaleConnections,
		JetStream: v.JetStream, MaxProcs: v.MaxProcs,
	}
	if st.JetStream != nil {
		// As nats-server, the broadcast does not show the store directory.
		js := *st.JetStream
		js.Config.StoreDir = ""
		st.JetStream = &js
	}
	routes := s.opts.Server.RoutesBrief()
	for _, r := range routes {
		st.Routes = append(st.Routes, &RouteStat{
			ID: r.RID, Name: r.RemoteName, Pending: r.Pending,
			Sent:     DataStats{Msgs: r.OutMsgs, Bytes: r.OutBytes},
			Received: DataStats{Msgs: r.InMsgs, Bytes: r.InBytes},
		})
	}
	if s.opts.Server.ClusterName() != "" {
		st.ActiveServers = len(routes) + 1
	}
	return &StatsMsg{Server: *s.info(), Stats: st}
}
