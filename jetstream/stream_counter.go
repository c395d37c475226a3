package jetstream

import (
	"encoding/json"
	"math/big"
	"strconv"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/store"
)

// Message counters (allow_msg_counter), as nats-server 2.12+ keeps them: a
// publish to a counter stream carries Nats-Incr (a signed decimal integer
// of any size) and no payload; the server adds it to the value of the
// subject's last message and stores a message whose body is
// {"val":"<sum>"}, headers as sent. The PubAck carries the new value.

// counterEntry is the value a subject's counter had after the append of seq.
type counterEntry struct {
	seq uint64
	val string
}

// checkIncr applies nats-server's rules for Nats-Incr before anything else
// about the message: the increment parses, the stream counts, the message
// has no payload and none of the headers a counter cannot honour.
func checkIncr(h *pubHeaders, allow bool, payload int) (*big.Int, *api.ApiError) {
	if len(h.incr) == 0 {
		if allow {
			return nil, api.NewError(api.ErrMessageIncrMissing)
		}
		return nil, nil
	}
	incr, ok := new(big.Int).SetString(string(h.incr), 10)
	switch {
	case !ok:
		return nil, api.NewError(api.ErrMessageIncrInvalid)
	case !allow:
		return nil, api.NewError(api.ErrMessageIncrDisabled)
	case payload > 0:
		return nil, api.NewError(api.ErrMessageIncrPayload)
	case len(h.rollup) > 0 || len(h.expStream) > 0 || h.hasExpLastMsgI || h.hasExpSubjSeq || len(h.expSubjSubj) > 0 || h.hasExpLastSeq:
		return nil, api.NewError(api.ErrMessageIncrInvalid)
	}
	return incr, nil
}

// counterNext returns the subject's counter after adding incr: the value of
// its newest message (in flight or stored) plus incr. Caller holds mu, so
// increments of one subject apply one at a time.
func (s *stream) counterNext(subj string, incr *big.Int) (string, *api.ApiError) {
	base := new(big.Int)
	if last := s.lastSeqForSubject(subj); last > 0 {
		if e, ok := s.counters[subj]; ok && e.seq == last {
			base.SetString(e.val, 10)
		} else {
			var m store.Msg
			if err := s.store.Load(last, &m); err != nil {
				return "", api.NewError(api.ErrMessageCounterBroken)
			}
			var v struct {
				Val string `json:"val"`
			}
			if json.Unmarshal(m.Data, &v) != nil {
				return "", api.NewError(api.ErrMessageCounterBroken)
			}
			if _, ok := base.SetString(v.Val, 10); !ok && v.Val != "" {
				return "", api.NewError(api.ErrMessageCounterBroken)
			}
		}
	}
	return base.Add(base, incr).String(), nil
}

// counterBody is the stored body of a counter message.
func counterBody(val string) []byte {
	return append(strconv.AppendQuote([]byte(`{"val":`), val), '}')
}

// rememberCounter records the value an append of subj at seq will have.
// Caller holds mu.
func (s *stream) rememberCounter(subj string, seq uint64, val string) {
	if s.counters == nil {
		s.counters = make(map[string]counterEntry)
	}
	if len(s.counters) > 4096 {
		clear(s.counters) // a cache: values reload from the store
	}
	s.counters[subj] = counterEntry{seq: seq, val: val}
}
