package memstore

import "github.com/jetwal/jetwal/store"

// AppendBatch stores msgs in order under one hold of the store lock, so a
// reader sees none or all of those stored, and fills in each one's Seq and
// Time. It returns how many were stored: on an error msgs[:n] are stored
// and msgs[n:] are not.
func (s *Store) AppendBatch(msgs []store.Msg) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range msgs {
		m := &msgs[i]
		seq, ts, err := s.appendLocked(m.Subject, m.Header, m.Data)
		if err != nil {
			return i, err
		}
		m.Seq, m.Time = seq, ts
	}
	return len(msgs), nil
}
