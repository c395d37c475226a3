package api

import "strconv"

// PubAck acknowledges a message stored in a stream. It has no "type" field.
type PubAck struct {
	Stream    string `json:"stream"`
	Sequence  uint64 `json:"seq"`
	Domain    string `json:"domain,omitempty"`
	Duplicate bool   `json:"duplicate,omitempty"`
}

// PubAckResponse is what a publisher receives: a PubAck, or an error together
// with the stream name and sequence 0.
type PubAckResponse struct {
	Error *ApiError `json:"error,omitempty"`
	*PubAck
}

// PubAckPrefix returns the constant start of every PubAck for a stream whose
// name is already JSON-encoded (quotes included): {"stream":<name>,"seq":,
// with "domain" between them when the server has a JetStream domain.
func PubAckPrefix(streamJSON []byte, domain string) []byte {
	b := make([]byte, 0, len(streamJSON)+len(domain)+32)
	b = append(b, `{"stream":`...)
	b = append(b, streamJSON...)
	if domain != "" {
		b = append(b, `,"domain":"`...)
		b = append(b, domain...) // ValidDomain: nothing to escape
		b = append(b, '"')
	}
	return append(b, `,"seq":`...)
}

// AppendPubAck appends a successful PubAck to b without reflection. prefix
// comes from PubAckPrefix. A duplicate is marked the way nats-server writes
// it, with a space after the colon: ,"duplicate": true}
func AppendPubAck(b, prefix []byte, seq uint64, duplicate bool) []byte {
	b = append(b, prefix...)
	b = strconv.AppendUint(b, seq, 10)
	if duplicate {
		return append(b, `,"duplicate": true}`...)
	}
	return append(b, '}')
}

// AppendCounterPubAck appends the PubAck of a counter increment: the
// counter's new value as a string, {"stream":…,"seq":N,"val":"V"}.
func AppendCounterPubAck(b, prefix []byte, seq uint64, val string) []byte {
	b = append(b, prefix...)
	b = strconv.AppendUint(b, seq, 10)
	b = append(b, `,"val":`...)
	b = strconv.AppendQuote(b, val)
	return append(b, '}')
}
