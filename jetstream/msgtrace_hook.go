package jetstream

import "slices"

// TraceStream is the server's StreamTracer (see server.SetStreamTracer): it
// tells message tracing that the in-process subscription with filter is
// the one of stream <name>, and the subject the stream would store a
// message published to subj under. cmd/jetwal installs it. It never holds
// two locks at once: the stream list is copied under mu first.
func (js *JetStream) TraceStream(filter, subj string) (name, stored string, ok bool) {
	streams := js.streamList()
	for _, s := range streams {
		s.cfgMu.RLock()
		hit := slices.Contains(s.cfg.Subjects, filter)
		xf := s.xf
		s.cfgMu.RUnlock()
		if hit {
			return s.name, xf.storedSubject(subj), true
		}
	}
	return "", "", false
}
