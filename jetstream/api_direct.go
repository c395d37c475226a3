package jetstream

import (
	"encoding/json"
	"strings"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/apiserver"
	"github.com/jetwal/jetwal/natshdr"
	"github.com/jetwal/jetwal/store"
)

// DIRECT.GET status replies, nats-server's texts.
var (
	hdrNotFound     = statusHeader(404, "Message Not Found")
	hdrEmptyRequest = statusHeader(408, "Empty Request")
	hdrBadRequest   = statusHeader(408, "Bad Request")
	hdrMalformed    = statusHeader(408, "Malformed Request")
)

// noResponders answers a request the way the server answers one that no
// subscription received: a 503 status naming the request subject. It stands
// for the subscriptions jetwal serves centrally but nats-server only makes
// for some streams or consumers (DIRECT.GET without allow_direct, acks of an
// ack_policy none consumer).
func (js *JetStream) noResponders(subj, reply string) {
	if reply == "" {
		return
	}
	hdr := natshdr.AppendStart(make([]byte, 0, 40+len(subj)), 503, "")
	js.srv.Publish(reply, "", natshdr.End(natshdr.AppendString(hdr, "Nats-Subject", subj)), nil)
}

// apiDirectGet serves DIRECT.GET.<name> (JSON body) and
// DIRECT.GET.<name>.<subject> (last message on subject). The reply is the
// stored message itself with Nats-Stream, Nats-Subject, Nats-Sequence and
// Nats-Time-Stamp headers (no headers at all with no_hdr), or a status-only
// 404/408 with nats-server's texts. A missing stream or one without
// allow_direct gets a 503 no-responders status, as nats-server subscribes
// the subject only for allow_direct streams.
func (js *JetStream) apiDirectGet(r *apiserver.Request) {
	name, _, _ := strings.Cut(r.Args, ".")
	js.directGet(js.lookup(name), r)
}

// directGet answers a DIRECT.GET about s (nil: no such stream here); in a
// cluster, a replica's read-only stream on a follower (cluster_direct.go).
func (js *JetStream) directGet(s *stream, r *apiserver.Request) {
	if r.Reply == "" {
		return
	}
	_, key, bySubject := strings.Cut(r.Args, ".")
	if s == nil || !s.allowDirect() {
		js.noResponders(r.Subject, r.Reply)
		return
	}
	if len(r.Hdr) > 0 && apiserver.LevelTooLow(r.Hdr) {
		js.srv.Publish(r.Reply, "", hdrLevelTooLow, nil)
		return
	}
	req, status := directGetRequest(r.Data, key, bySubject)
	if status != nil {
		js.srv.Publish(r.Reply, "", status, nil)
		return
	}
	switch {
	case len(req.MultiLastFor) > 0:
		js.directGetMulti(s, &req, r.Reply)
		return
	case req.Batch != 0:
		js.directGetBatch(s, &req, r.Reply)
		return
	case req.StartTime != nil:
		req.Seq = s.seqForTime(*req.StartTime)
	}
	var m store.Msg
	if err := s.loadDirect(&req, &m); err != nil {
		js.srv.Publish(r.Reply, "", hdrNotFound, nil)
		return
	}
	var hdr []byte
	if !req.NoHeaders {
		hdr = directGetHeader(make([]byte, 0, len(m.Header)+128+len(s.name)+len(m.Subject)), m.Header, s.name, m.Subject, m.Seq, m.Time)
	}
	js.srv.Publish(r.Reply, "", hdr, m.Data)
}

// directGetRequest decodes a DIRECT.GET body and checks it as nats-server
// does, returning the status to answer with when it is refused. For the
// by-subject form (bySubject) the key from the subject is the last_by_subj
// and the body may only carry no_hdr.
func directGetRequest(body []byte, key string, bySubject bool) (api.MsgGetRequest, []byte) {
	var req api.MsgGetRequest
	if bySubject {
		if len(body) > 0 && json.Unmarshal(body, &req) != nil {
			return req, hdrMalformed
		}
		if key == "" || req.LastFor != "" || req.NextFor != "" || len(req.MultiLastFor) > 0 || req.Seq != 0 ||
			req.Batch != 0 || req.StartTime != nil || req.UpToSeq != 0 || req.UpToTime != nil {
			return req, hdrBadRequest
		}
		req.LastFor = key
		return req, nil
	}
	if len(body) == 0 {
		return req, hdrEmptyRequest
	}
	if json.Unmarshal(body, &req) != nil {
		return req, hdrMalformed
	}
	if req.Seq == 0 && req.LastFor == "" && req.NextFor == "" && len(req.MultiLastFor) == 0 && req.StartTime == nil {
		return req, hdrEmptyRequest
	}
	if (req.Seq > 0 && req.LastFor != "") ||
		(req.Seq > 0 && req.StartTime != nil) ||
		(req.StartTime != nil && req.LastFor != "") ||
		(req.LastFor != "" && req.NextFor != "") ||
		(req.LastFor != "" && req.Batch > 0) ||
		(req.LastFor != "" && len(req.MultiLastFor) > 0) ||
		(req.NextFor != "" && len(req.MultiLastFor) > 0) ||
		(req.UpToSeq > 0 && req.UpToTime != nil) {
		return req, hdrBadRequest
	}
	return req, nil
}

// allowDirect reports whether the stream answers DIRECT.GET.
func (s *stream) allowDirect() bool {
	s.cfgMu.RLock()
	defer s.cfgMu.RUnlock()
	return s.cfg.AllowDirect
}
