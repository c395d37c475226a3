package jetstream

import (
	"testing"
	"time"

	"github.com/jetwal/jetwal/store"
)

// TestCLISchedules: the pinned nats CLI creates a stream allowing
// schedules, shows it, and its `nats pub --schedule-*` messages fire.
func TestCLISchedules(t *testing.T) {
	ts := startServer(t, fastSync())
	c := newCLI(t, ts)
	c.ok(args("stream", "add", "SCH", "--subjects", "sch.>", "--storage", "file", "--allow-schedules", "--defaults"),
		"Stream SCH was created", "Allows Schedules: true")
	c.ok(args("pub", "sch.once", "later", "--schedule-after", "1s", "--schedule-dest", "sch.out.once"), "Published")
	c.ok(args("pub", "sch.every", "tick", "--schedule-every", "1s", "--schedule-dest", "sch.out.every"), "Published")
	s := ts.js.lookup("SCH")
	deadline := time.Now().Add(20 * time.Second)
	for {
		once, every := countSubject(s, "sch.out.once"), countSubject(s, "sch.out.every")
		if once == 1 && every >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("produced: %d once, %d every", once, every)
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.ok(args("stream", "get", "SCH", "--last-for", "sch.out.once"), "Nats-Scheduler: sch.once", "Nats-Schedule-Next: purge")
}

// countSubject counts the stream's messages on subj.
func countSubject(s *stream, subj string) int {
	n := 0
	var m store.Msg
	for seq := uint64(1); s.store.LoadNext(subj, seq, &m) == nil; seq = m.Seq + 1 {
		n++
	}
	return n
}
