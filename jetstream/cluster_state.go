package jetstream

import (
	"encoding/json"
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
)

// True stream states in a cluster. The meta leader answers STREAM.LIST and
// $JS.API.INFO, but only the server serving a stream (a replicated
// stream's leader, an R1 stream's host) knows its state, consumers and
// sources; a follower's replica may lag and other servers hold nothing.
// So the meta leader asks: it sends the names it lacks on stateSubject,
// every server answers with the infos of those it serves, and it waits
// until it has them all or stateWait has passed (a stream without a
// leader then shows its assignment with the best local state, as before).
// As with nats-server, which asks each stream's leader the same way.
// The request and the answers travel in the server's internal account
// (Cluster.Gather/Answer): no client can ask or answer.

const (
	stateSubject = "STATE"
	stateWait    = 2 * time.Second
)

// serveStates answers other servers' state requests for the streams this
// server serves; it runs once the cluster has started.
func (js *JetStream) serveStates() error {
	stop, err := js.cl.c.Answer(stateSubject, js.answerStates)
	if err != nil {
		return err
	}
	js.cl.mu.Lock()
	js.cl.stopStates = stop
	js.cl.mu.Unlock()
	return nil
}

// servedInfo is the info of a stream this server serves, nil when it does
// not (or no longer leads it).
func (js *JetStream) servedInfo(name string) *api.StreamInfo {
	s := js.lookup(name)
	if s == nil || s.rep != nil && !s.rep.IsLeader() {
		return nil
	}
	info := js.streamInfo(s, false)
	info.Cluster = js.clusterInfo(s)
	return info
}

// answerStates answers a state request: the JSON list of the infos of the
// requested streams this server serves, nil when none.
func (js *JetStream) answerStates(_ string, data []byte) []byte {
	var names []string
	if json.Unmarshal(data, &names) != nil || len(names) > api.ListLimit {
		return nil
	}
	var out []*api.StreamInfo
	for _, n := range names {
		if info := js.servedInfo(n); info != nil {
			out = append(out, info)
		}
	}
	if len(out) == 0 {
		return nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil
	}
	return b
}

// leaderInfos returns the infos of the assigned streams as the servers
// serving them report them, by name; a stream whose server did not answer
// within stateWait is absent.
func (js *JetStream) leaderInfos(as []streamAssignment) map[string]*api.StreamInfo {
	out := make(map[string]*api.StreamInfo, len(as))
	want := map[string]bool{}
	var ask []string
	for _, a := range as {
		if info := js.servedInfo(a.Config.Name); info != nil {
			out[a.Config.Name] = info
			continue
		}
		want[a.Config.Name] = true
		ask = append(ask, a.Config.Name)
	}
	for len(ask) > 0 {
		// At most a page of names per request (answerStates' bound).
		part := ask[:min(len(ask), api.ListLimit)]
		ask = ask[len(part):]
		body, err := json.Marshal(part)
		if err != nil {
			break
		}
		missing := len(part)
		err = js.cl.c.Gather(stateSubject, body, stateWait, func(b []byte) bool {
			var infos []*api.StreamInfo
			if json.Unmarshal(b, &infos) != nil {
				return false
			}
			for _, info := range infos {
				if info == nil || !want[info.Config.Name] || out[info.Config.Name] != nil {
					continue
				}
				out[info.Config.Name] = info
				missing--
			}
			return missing <= 0
		})
		if err != nil {
			js.log.Warn("cluster: asking for stream states", "error", err)
			break
		}
	}
	return out
}

// listedInfo is a stream's info for STREAM.LIST and account info: the
// serving server's when it answered, else the assignment's.
func (js *JetStream) listedInfo(a streamAssignment, infos map[string]*api.StreamInfo) *api.StreamInfo {
	if info := infos[a.Config.Name]; info != nil {
		return info
	}
	return js.assignedInfo(a, false)
}
