package sysreq

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jetwal/jetwal/monitor"
	"github.com/jetwal/jetwal/server"
)

// Kinds are the request kinds answered, after PING. or <server id>.
var Kinds = []string{"STATSZ", "VARZ", "JSZ", "CONNZ", "HEALTHZ", "SUBSZ", "ROUTEZ", "IDZ"}

// Options configure a Service.
type Options struct {
	Server *server.Server
	// Account is the system account: the requests are served, and the
	// connection events published, in it. nil = $G (a server without
	// accounts, whose system users are told apart by permissions; see
	// RestrictAuth).
	Account   *server.Account
	Monitor   *monitor.Monitor // builds the documents (monitor.New or Start)
	JetStream bool             // JetStream is enabled on this server
	Domain    string           // its JetStream domain, if any
	Logger    *slog.Logger     // nil = discard
}

// Service answers $SYS.REQ.SERVER requests for one server and publishes
// its connection events.
type Service struct {
	opts Options
	acc  *server.Account // Options.Account, or $G
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
	body        []byte
	acc         *server.Account // where to answer
	cid         uint64          // the requester (USER.INFO)
}

// queueLen bounds the requests waiting to be answered; more are dropped
// (the asker times out) rather than blocking a publisher.
const queueLen = 256

// Start subscribes to the request subjects and answers them on a goroutine
// of its own (handlers must not block the publisher).
func Start(o Options) (*Service, error) {
	if o.Server == nil || o.Monitor == nil {
		return nil, errors.New("sysreq: a server and a monitor are required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{opts: o, reqs: make(chan pending, queueLen), events: make(chan server.ConnEvent, queueLen), done: make(chan struct{})}
	s.acc = o.Account
	if s.acc == nil {
		s.acc = o.Server.GlobalAccount()
	}
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
	if err := s.subscribeUserInfo(); err != nil {
		s.Stop()
		return nil, err
	}
	s.wg.Add(1)
	go s.loop()
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
	r := pending{kind: kind, reply: m.Reply, body: append([]byte(nil), m.Data...), acc: s.acc}
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
			} else if b := s.answer(r.kind, r.body); b != nil {
				r.acc.Publish(r.reply, "", nil, b)
			}
		case ev := <-s.events:
			s.publishEvent(ev)
		}
	}
}

// answer returns the JSON answer to a request, or nil when this server is
// filtered out.
func (s *Service) answer(kind string, body []byte) []byte {
	resp, skip := s.build(kind, body)
	if skip {
		return nil
	}
	b, err := json.Marshal(resp)
	if err != nil {
		b, _ = json.Marshal(&Response{Server: s.info(), Error: &APIError{Code: http.StatusInternalServerError, Description: "encoding the answer: " + err.Error()}})
	}
	return b
}

// build makes the answer of one kind; skip is true when the request's
// filter excludes this server.
func (s *Service) build(kind string, body []byte) (resp any, skip bool) {
	m := s.opts.Monitor
	if kind == "IDZ" {
		i := s.info()
		return &ServerID{Name: i.Name, Host: i.Host, ID: i.ID}, false
	}
	var f filter
	var connz monitor.ConnzOptions
	var routez struct {
		Subs bool `json:"subscriptions"`
	}
	var jsz jszOptions
	if len(body) > 0 {
		// The filter, then the options of the kind, with their types checked
		// (nats-server decodes both from the one body).
		err := json.Unmarshal(body, &f)
		if err == nil {
			switch kind {
			case "CONNZ":
				err = json.Unmarshal(body, &connz)
			case "ROUTEZ":
				err = json.Unmarshal(body, &routez)
			case "JSZ":
				err = json.Unmarshal(body, &jsz)
			}
		}
		if err != nil {
			return s.fail(http.StatusBadRequest, fmt.Errorf("%s request options: %w", strings.ToLower(kind), err)), false
		}
		if !s.matches(&f) {
			return nil, true
		}
	}
	var data any
	switch kind {
	case "STATSZ":
		return s.statsz(), false
	case "VARZ":
		data = m.Varz()
	case "JSZ":
		data = m.Jsz()
	case "CONNZ":
		c, err := m.Connz(connz)
		if err != nil {
			return s.fail(http.StatusInternalServerError, err), false
		}
		data = c
	case "HEALTHZ":
		data = m.Healthz()
	case "SUBSZ":
		data = m.Subsz()
	case "ROUTEZ":
		data = m.Routez(routez.Subs)
	default:
		return s.fail(http.StatusBadRequest, fmt.Errorf("unknown request %q", kind)), false
	}
	return &Response{Server: s.info(), Data: data}, false
}

// jszOptions are nats-server's JSzOptions. They are checked, but jetwal's
// /jsz has no account, stream or consumer details to add, and one server
// is its own JetStream leader.
type jszOptions struct {
	Account    string `json:"account,omitempty"`
	Accounts   bool   `json:"accounts,omitempty"`
	Streams    bool   `json:"streams,omitempty"`
	Consumer   bool   `json:"consumer,omitempty"`
	Config     bool   `json:"config,omitempty"`
	LeaderOnly bool   `json:"leader_only,omitempty"`
	Offset     int    `json:"offset,omitempty"`
	Limit      int    `json:"limit,omitempty"`
	RaftGroups bool   `json:"raft,omitempty"`
}

func (s *Service) fail(code int, err error) *Response {
	return &Response{Server: s.info(), Error: &APIError{Code: code, Description: err.Error()}}
}

// matches applies nats-server's event filter: name, host and cluster by
// substring (or exactly with exact_match), and the JetStream domain.
// jetwal has no server tags, so
// a request naming any matches no server.
func (s *Service) matches(f *filter) bool {
	if len(f.Tags) > 0 || (f.Domain != "" && f.Domain != s.opts.Domain) {
		return false
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
		Domain: s.opts.Domain, Seq: s.seq.Add(1), Time: time.Now().UTC(),
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
		Start: v.Start, Mem: v.Mem, Cores: v.Cores, Connections: v.Connections,
		TotalConnections: v.TotalConnections, ActiveAccounts: 1, NumSubs: v.Subscriptions,
		Sent:            DataStats{Msgs: v.OutMsgs, Bytes: v.OutBytes},
		SentToClients:   DataStats{Msgs: v.OutClientMsgs, Bytes: v.OutClientBytes},
		Received:        DataStats{Msgs: v.InMsgs, Bytes: v.InBytes},
		ReceivedClients: DataStats{Msgs: v.InClientMsgs, Bytes: v.InClientBytes},
		SlowConsumers:   v.SlowConsumers, StaleConnections: v.StaleConnections,
		JetStream: v.JetStream, MaxProcs: v.MaxProcs,
	}
	routes := s.opts.Server.Routes()
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
