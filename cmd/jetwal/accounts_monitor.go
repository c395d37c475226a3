package main

import (
	"github.com/jetwal/jetwal/jetstream"
)

// jetStreams is the monitor's view (monitor.JetStream) of the JetStreams
// of several accounts: their usage added up and the details of each.
type jetStreams []*jetstream.JetStream

// Stats adds up the accounts' usage; the configuration is the first's
// (every account's JetStream shares the store and its settings).
func (jss jetStreams) Stats() jetstream.Stats {
	var st jetstream.Stats
	for i, js := range jss {
		s := js.Stats()
		if i == 0 {
			st = s
			continue
		}
		st.Streams += s.Streams
		st.Consumers += s.Consumers
		st.Messages += s.Messages
		st.Bytes += s.Bytes
		st.Memory += s.Memory
		st.Store += s.Store
		st.APITotal += s.APITotal
		st.APIErrors += s.APIErrors
		st.LoadErrors = append(st.LoadErrors, s.LoadErrors...)
	}
	return st
}

// AccountDetails lists every account's details.
func (jss jetStreams) AccountDetails(o jetstream.DetailOptions) []jetstream.AccountDetail {
	var out []jetstream.AccountDetail
	for _, js := range jss {
		out = append(out, js.AccountDetails(o)...)
	}
	return out
}
