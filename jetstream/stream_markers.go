package jetstream

import (
	"bytes"
	"errors"
	"strconv"
	"time"

	"github.com/jetwal/jetwal/natshdr"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/store"
)

// Subject delete markers (subject_delete_marker_ttl, nats-server 2.11+).
// When max_age or a message's Nats-TTL removes the last message of a
// subject, the stream stores a marker in its place, so that watchers (a KV
// bucket's, above all) see the subject go away instead of silently losing
// it. A marker is an ordinary message on that subject, with no body and the
// headers nats-server writes:
//
//	Nats-Marker-Reason: MaxAge
//	Nats-TTL: <subject_delete_marker_ttl>
//	Nats-Rollup: sub
//
// Its rollup removes the expired message once the marker is durable, and
// its TTL removes the marker itself later (a marker expiring leaves no new
// marker). A message that is not the last of its subject is simply deleted.
//
// With markers on, the stream applies max_age itself, in the same expiry
// timer pass that applies TTLs (the store is given no MaxAge, see
// storeLimits): the store cannot know which removals need a marker. The
// timer is armed for when the oldest message passes max_age, and, as in
// nats-server, a message whose Nats-TTL is "never" is kept past max_age.
//
// Markers are stored messages and their TTLs sit in the expiry heap, so
// both survive a restart; a message that aged out while the server was down
// gets its marker at the first pass after the restart (when the stream
// starts serving).

// Header names and values of a marker (nats-server's JSMarkerReason*).
const (
	hdrMarkerReason    = "Nats-Marker-Reason"
	markerReasonMaxAge = "MaxAge"
	hdrKVOperation     = "KV-Operation"
	kvOperationPurge   = "PURGE"
)

// isDeleteMarker reports whether a message is already a marker: one carrying
// a Nats-Marker-Reason, or a KV purge. Removing it leaves no new marker.
func isDeleteMarker(hdr []byte) bool {
	if len(hdr) == 0 {
		return false
	}
	return len(headerValue(hdr, hdrMarkerReason)) > 0 ||
		bytes.Equal(headerValue(hdr, hdrKVOperation), []byte(kvOperationPurge))
}

// markerHeader is the header block of a marker whose own TTL is ttl.
func markerHeader(ttl time.Duration) []byte {
	h := natshdr.AppendStart(make([]byte, 0, 96), 0, "")
	h = natshdr.AppendString(h, hdrMarkerReason, markerReasonMaxAge)
	h = natshdr.AppendString(h, hdrTTL, ttl.String())
	h = natshdr.AppendString(h, hdrRollup, rollupSubject)
	return natshdr.End(h)
}

// markerSettings returns the marker TTL (0: markers off) and max_age.
func (s *stream) markerSettings() (ttl, maxAge time.Duration) {
	s.cfgMu.RLock()
	defer s.cfgMu.RUnlock()
	if s.cfg.SubjectDeleteMarkerTTL <= 0 {
		return 0, 0
	}
	return s.cfg.SubjectDeleteMarkerTTL.Truncate(time.Second), s.cfg.MaxAge
}

// expireWithMarkers is the expiry pass of a stream with markers: it
// removes the messages past max_age and those whose TTL heap entries are in
// due, leaving markers where a subject loses its last message, and returns
// when the next message passes max_age (0: none). It reports false, doing
// nothing, when the stream has no markers.
func (s *stream) expireWithMarkers(now time.Time, due []uint64) (ok bool, nextAged int64) {
	ttl, maxAge := s.markerSettings()
	if ttl == 0 {
		return false, 0
	}
	for _, seq := range due {
		s.expireOne(seq, ttl, false)
	}
	if maxAge > 0 {
		if t := s.expireAged(now.Add(-maxAge).UnixNano(), ttl); t != 0 {
			nextAged = t + int64(maxAge)
		}
	}
	return true, nextAged
}

// expireAged removes, oldest first, the messages stored at or before
// cutoff (unix ns), except those whose Nats-TTL says never. It returns the
// time of the oldest message it left that will age out (0: none).
func (s *stream) expireAged(cutoff int64, ttl time.Duration) (oldest int64) {
	var m store.Msg
	for seq := s.store.State().FirstSeq; ; seq = m.Seq + 1 {
		if err := s.store.LoadNext("", seq, &m); err != nil {
			if !errors.Is(err, store.ErrEOF) && !errors.Is(err, store.ErrClosed) {
				s.env.log.Warn("reading messages to age out", "stream", s.name, "seq", seq, "error", err)
			}
			return 0
		}
		if m.Time > cutoff {
			return m.Time
		}
		if v := headerValue(m.Header, hdrTTL); len(v) > 0 {
			if d, err := parseMsgTTL(string(v)); err == nil && d < 0 {
				continue // "never": kept past max_age, as nats-server does
			}
		}
		s.expireOne(m.Seq, ttl, true)
	}
}

// expireOne removes message seq, or stores a marker that rolls it up when it
// is the last message of its subject and not a marker itself.
func (s *stream) expireOne(seq uint64, ttl time.Duration, aged bool) {
	var m store.Msg
	if err := s.store.Load(seq, &m); err != nil {
		return // already gone (deleted, purged, rolled up)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	if s.resync.Load() {
		s.resyncLocked()
	}
	if isDeleteMarker(m.Header) || s.lastSeqForSubject(m.Subject) != seq {
		s.mu.Unlock()
		s.removeExpired(seq, aged)
		return
	}
	// Still the newest of its subject, and no publish can come in between
	// while mu is held: the marker's rollup removes exactly this message.
	s.cfgMu.RLock()
	rp := s.xf.target(m.Subject)
	s.cfgMu.RUnlock()
	mk := server.Msg{Subject: m.Subject, Header: markerHeader(ttl)}
	var h pubHeaders
	res := s.appendMsgLocked(&mk, &h, "", 's', ttl, rp, nil)
	s.mu.Unlock()
	if res.aerr != nil {
		// The marker could not be stored (a limit): still honour the
		// expiry, as the store would without markers.
		s.env.log.Warn("storing a subject delete marker", "stream", s.name, "subject", m.Subject, "error", res.aerr.Description)
		s.removeExpired(seq, aged)
	}
	if res.hasJob {
		s.finish(&res.job)
	}
	for i := range res.jobs {
		s.finish(&res.jobs[i])
	}
	putJobs(res.jobs)
}

// removeExpired deletes one expired message; one already gone is fine.
func (s *stream) removeExpired(seq uint64, aged bool) {
	err := s.store.Delete(seq, false)
	if err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrClosed) {
		what := "removing an expired message"
		if aged {
			what = "removing a message past max_age"
		}
		s.env.log.Warn(what, "stream", s.name, "seq", seq, "error", err)
	}
}

// markerMinTTL raises a message's TTL to the marker TTL, as nats-server
// does, so that a subject's marker is never outlived by a shorter-lived
// message on it (not with max_msgs_per_subject 1, where one message is all a
// subject holds). The stored Nats-TTL header is rewritten in whole seconds.
func (s *stream) markerMinTTL(ttl time.Duration, m *server.Msg) (time.Duration, *server.Msg) {
	s.cfgMu.RLock()
	sdm, perSubj := s.cfg.SubjectDeleteMarkerTTL, s.cfg.MaxMsgsPer
	s.cfgMu.RUnlock()
	floor := sdm.Truncate(time.Second)
	if ttl <= 0 || sdm <= 0 || perSubj == 1 || ttl >= floor {
		return ttl, m
	}
	cm := *m
	cm.Header = replaceHeader(m.Header, hdrTTL, strconv.FormatInt(int64(floor/time.Second), 10))
	return floor, &cm
}

// replaceHeader returns a copy of a header block without the fields called
// name, with name: value added at the end.
func replaceHeader(hdr []byte, name, value string) []byte {
	out := withoutHeader(hdr, name, len(name)+len(value)+4)
	out = out[:len(out)-len(crlf)] // reopen the block
	return natshdr.End(natshdr.AppendString(out, name, value))
}

// withoutHeader returns a copy of a header block without the fields called
// name, with spare capacity extra.
func withoutHeader(hdr []byte, name string, extra int) []byte {
	out := make([]byte, 0, len(hdr)+extra+4)
	i := bytes.Index(hdr, []byte(crlf))
	if i < 0 {
		return natshdr.End(natshdr.AppendStart(out, 0, ""))
	}
	out = append(out, hdr[:i+2]...)
	natshdr.Fields(hdr, func(n, _, line []byte) bool {
		if n == nil || !eqFold(n, name) {
			out = append(out, line...)
		}
		return true
	})
	return natshdr.End(out)
}
