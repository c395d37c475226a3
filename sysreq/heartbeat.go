package sysreq

import (
	"encoding/json"
	"time"
)

// The statsz heartbeat: like nats-server, every server publishes its
// ServerStatsMsg on $SYS.SERVER.<id>.STATSZ, first 250ms after start, then
// at twice the previous interval up to every 10s (nats-server's
// statsHBInterval). Nothing is encoded or sent while nobody, here or on
// another server of the cluster, subscribes to the subject.

// Heartbeat intervals, nats-server's.
const (
	statszFirst = 250 * time.Millisecond
	// DefaultStatszInterval is the longest time between two broadcasts.
	DefaultStatszInterval = 10 * time.Second
)

// StatszSubject is the subject of a server's statsz broadcast.
func StatszSubject(serverID string) string { return "$SYS.SERVER." + serverID + ".STATSZ" }

// heartbeat publishes the statsz until Stop.
func (s *Service) heartbeat() {
	defer s.wg.Done()
	limit := s.opts.StatszInterval
	if limit <= 0 {
		limit = DefaultStatszInterval
	}
	interval := min(statszFirst, limit)
	t := time.NewTimer(interval)
	defer t.Stop()
	subj := StatszSubject(s.opts.Server.ID())
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		if s.acc.HasInterest(subj) {
			if b, err := json.Marshal(s.statsz()); err != nil {
				s.opts.Logger.Error("encoding the statsz heartbeat", "err", err)
			} else {
				s.acc.Publish(subj, "", nil, b)
			}
		}
		interval = min(interval*2, limit)
		t.Reset(interval)
	}
}
