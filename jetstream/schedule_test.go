package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/jetstream/api"
)

// schedStream creates file stream S over sched.> and out.> with message
// schedules and per-message TTLs.
func schedStream(t *testing.T, js njs.JetStream) njs.Stream {
	t.Helper()
	return schedStreamOn(t, js, njs.FileStorage)
}

func schedStreamOn(t *testing.T, js njs.JetStream, storage njs.StorageType) njs.Stream {
	t.Helper()
	s, err := js.CreateStream(context.Background(), njs.StreamConfig{
		Name: "S", Subjects: []string{"sched.>", "out.>"}, AllowMsgSchedules: true, AllowMsgTTL: true, Storage: storage,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// publishSchedule publishes body to subj with the given headers.
func publishSchedule(js njs.JetStream, subj, body string, hdr map[string]string) (*njs.PubAck, error) {
	m := nats.NewMsg(subj)
	for k, v := range hdr {
		m.Header.Set(k, v)
	}
	m.Data = []byte(body)
	return js.PublishMsg(context.Background(), m)
}

// waitLast polls until subj has a message with a sequence above after, and
// returns it.
func waitLast(t *testing.T, s njs.Stream, subj string, after uint64, within time.Duration) *njs.RawStreamMsg {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if m, err := s.GetLastMsgForSubject(context.Background(), subj); err == nil && m.Sequence > after {
			return m
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no message on %s after seq %d within %v", subj, after, within)
	return nil
}

func atIn(d time.Duration) string { return "@at " + time.Now().Add(d).UTC().Format(time.RFC3339) }

// TestScheduleAtFiresOnce: an @at schedule produces one message on its
// target when due, with the schedule's body and headers less the
// schedule's own, plus Nats-Scheduler, Nats-Schedule-Next: purge and the
// schedule's TTL; then the schedule message is removed. File and memory
// streams alike.
func TestScheduleAtFiresOnce(t *testing.T) {
	forEachStorage(t, func(t *testing.T, ts *testServer, js njs.JetStream, storage njs.StorageType) {
		testScheduleAtFiresOnce(t, ts, js, schedStreamOn(t, js, storage))
	})
}

func testScheduleAtFiresOnce(t *testing.T, ts *testServer, js njs.JetStream, s njs.Stream) {
	ack, err := publishSchedule(js, "sched.a", "hello", map[string]string{
		"Nats-Schedule": atIn(2 * time.Second), "Nats-Schedule-Target": "out.a",
		"Nats-Schedule-TTL": "5m", "Nats-Msg-Id": "m1", "X-Keep": "yes",
	})
	if err != nil {
		t.Fatal(err)
	}
	if ack.Stream != "S" || ack.Sequence != 1 {
		t.Fatalf("pub ack %+v", ack)
	}
	stored, err := s.GetMsg(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := stored.Header.Get("Nats-Rollup"); got != "sub" {
		t.Fatalf("the stored schedule has Nats-Rollup %q, want sub", got)
	}
	m := waitLast(t, s, "out.a", 0, 20*time.Second)
	if string(m.Data) != "hello" || len(m.Header) != 4 {
		t.Fatalf("produced body %q, headers %v (want 4)", m.Data, m.Header)
	}
	for k, want := range map[string]string{
		"Nats-Scheduler": "sched.a", "Nats-Schedule-Next": "purge", "Nats-TTL": "5m", "X-Keep": "yes",
		"Nats-Schedule": "", "Nats-Schedule-Target": "", "Nats-Schedule-TTL": "", "Nats-Msg-Id": "", "Nats-Rollup": "",
	} {
		if got := m.Header.Get(k); got != want {
			t.Fatalf("produced header %s = %q, want %q (all: %v)", k, got, want, m.Header)
		}
	}
	waitGone(t, s, 1, 10*time.Second)
	info, err := s.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 1 {
		t.Fatalf("%d messages, want only the produced one", info.State.Msgs)
	}
	if n := ts.js.lookup("S").sched.n.Load(); n != 0 {
		t.Fatalf("%d schedules still pending", n)
	}
}

// TestScheduleEveryRepeats: an @every schedule fires again and again, each
// produced message naming the next firing, until a purge message (Nats-
// Schedule-Next: purge with Nats-Scheduler) removes it.
func TestScheduleEveryRepeats(t *testing.T) {
	ts := startServer(t, Config{})
	js, _ := njs.New(ts.connect())
	s := schedStream(t, js)
	if _, err := publishSchedule(js, "sched.e", "tick", map[string]string{
		"Nats-Schedule": "@every 1s", "Nats-Schedule-Target": "out.e",
	}); err != nil {
		t.Fatal(err)
	}
	var last uint64
	var prevNext time.Time
	for i := 0; i < 3; i++ {
		m := waitLast(t, s, "out.e", last, 20*time.Second)
		last = m.Sequence
		next, err := time.Parse(time.RFC3339Nano, m.Header.Get("Nats-Schedule-Next"))
		if err != nil || m.Header.Get("Nats-Scheduler") != "sched.e" {
			t.Fatalf("produced headers %v: %v", m.Header, err)
		}
		if !next.After(prevNext) {
			t.Fatalf("next firing %v is not after %v", next, prevNext)
		}
		prevNext = next
	}
	if _, err := s.GetMsg(context.Background(), 1); err != nil {
		t.Fatalf("the repeating schedule is gone: %v", err)
	}
	// A purge message removes the schedule.
	if _, err := publishSchedule(js, "sched.cancel", "", map[string]string{
		"Nats-Schedule-Next": "purge", "Nats-Scheduler": "sched.e",
	}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, s, 1, 10*time.Second)
	deadline := time.Now().Add(10 * time.Second)
	for ts.js.lookup("S").sched.n.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the cancelled schedule is still pending")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestScheduleRefusals: the schedule headers nats-server refuses get its
// error codes, and nothing is stored.
func TestScheduleRefusals(t *testing.T) {
	ts := startServer(t, Config{})
	js, _ := njs.New(ts.connect())
	s := schedStream(t, js)
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "P", Subjects: []string{"plain.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "NT", Subjects: []string{"nt.>"}, AllowMsgSchedules: true}); err != nil {
		t.Fatal(err)
	}
	at := atIn(time.Hour)
	for _, c := range []struct {
		name, subj string
		hdr        map[string]string
		code       api.ErrCode
	}{
		{"schedules disabled", "plain.a", map[string]string{"Nats-Schedule": at, "Nats-Schedule-Target": "plain.b"}, api.ErrMessageSchedulesDisabled},
		{"bad pattern, disabled", "plain.a", map[string]string{"Nats-Schedule": "@at soon"}, api.ErrMessageSchedulesDisabled},
		{"bad @at", "sched.a", map[string]string{"Nats-Schedule": "@at soon", "Nats-Schedule-Target": "out.a"}, api.ErrMessageSchedulesPatternInvalid},
		{"@every under a second", "sched.a", map[string]string{"Nats-Schedule": "@every 500ms", "Nats-Schedule-Target": "out.a"}, api.ErrMessageSchedulesPatternInvalid},
		{"bad cron", "sched.a", map[string]string{"Nats-Schedule": "61 * * * * *", "Nats-Schedule-Target": "out.a"}, api.ErrMessageSchedulesPatternInvalid},
		{"bad cron in a valid zone", "sched.a", map[string]string{"Nats-Schedule": "invalid", "Nats-Schedule-Target": "out.a", "Nats-Schedule-Time-Zone": "UTC"}, api.ErrMessageSchedulesPatternInvalid},
		{"cron in an unknown zone", "sched.a", map[string]string{"Nats-Schedule": "0 * * * * *", "Nats-Schedule-Target": "out.a", "Nats-Schedule-Time-Zone": "Not/A/Zone"}, api.ErrMessageSchedulesTimeZoneInval},
		{"@at with a time zone", "sched.a", map[string]string{"Nats-Schedule": at, "Nats-Schedule-Target": "out.a", "Nats-Schedule-Time-Zone": "Europe/Amsterdam"}, api.ErrMessageSchedulesPatternInvalid},
		{"unknown time zone", "sched.a", map[string]string{"Nats-Schedule": at, "Nats-Schedule-Target": "out.a", "Nats-Schedule-Time-Zone": "Nowhere/Land"}, api.ErrMessageSchedulesTimeZoneInval},
		{"no target", "sched.a", map[string]string{"Nats-Schedule": at}, api.ErrMessageSchedulesTargetInvalid},
		{"target is the schedule", "sched.a", map[string]string{"Nats-Schedule": at, "Nats-Schedule-Target": "sched.a"}, api.ErrMessageSchedulesTargetInvalid},
		{"target outside the stream", "sched.a", map[string]string{"Nats-Schedule": at, "Nats-Schedule-Target": "elsewhere.a"}, api.ErrMessageSchedulesTargetInvalid},
		{"wildcard target", "sched.a", map[string]string{"Nats-Schedule": at, "Nats-Schedule-Target": "out.*"}, api.ErrMessageSchedulesTargetInvalid},
		{"bad TTL", "sched.a", map[string]string{"Nats-Schedule": at, "Nats-Schedule-Target": "out.a", "Nats-Schedule-TTL": "soon"}, api.ErrMessageSchedulesTTLInvalid},
		{"TTL without allow_msg_ttl", "nt.a", map[string]string{"Nats-Schedule": at, "Nats-Schedule-Target": "nt.b", "Nats-Schedule-TTL": "1m"}, api.ErrMessageTTLDisabled},
		{"schedule rollup all", "sched.a", map[string]string{"Nats-Schedule": at, "Nats-Schedule-Target": "out.a", "Nats-Schedule-Rollup": "all"}, api.ErrMessageSchedulesRollupInvalid},
		{"message rollup all", "sched.a", map[string]string{"Nats-Schedule": at, "Nats-Schedule-Target": "out.a", "Nats-Rollup": "all"}, api.ErrMessageSchedulesRollupInvalid},
		{"source is the target", "sched.a", map[string]string{"Nats-Schedule": at, "Nats-Schedule-Target": "out.a", "Nats-Schedule-Source": "out.a"}, api.ErrMessageSchedulesSourceInvalid},
		{"source outside the stream", "sched.a", map[string]string{"Nats-Schedule": at, "Nats-Schedule-Target": "out.a", "Nats-Schedule-Source": "elsewhere.a"}, api.ErrMessageSchedulesSourceInvalid},
		{"scheduler alone", "out.a", map[string]string{"Nats-Scheduler": "sched.a"}, api.ErrMessageSchedulesSchedulerInval},
		{"next not purge", "out.a", map[string]string{"Nats-Scheduler": "sched.a", "Nats-Schedule-Next": "2030-01-01T00:00:00Z"}, api.ErrMessageSchedulesSchedulerInval},
		{"purge without scheduler", "out.a", map[string]string{"Nats-Schedule-Next": "purge"}, api.ErrMessageSchedulesSchedulerInval},
		{"purge, disabled", "plain.a", map[string]string{"Nats-Schedule-Next": "purge", "Nats-Scheduler": "plain.b"}, api.ErrMessageSchedulesDisabled},
	} {
		_, err := publishSchedule(js, c.subj, "x", c.hdr)
		var apiErr *njs.APIError
		if !errors.As(err, &apiErr) || apiErr.ErrorCode != njs.ErrorCode(c.code) {
			t.Fatalf("%s: %v, want error %d", c.name, err, c.code)
		}
		if want := api.NewError(c.code).Description; apiErr.Description != want {
			t.Fatalf("%s: description %q, want %q", c.name, apiErr.Description, want)
		}
	}
	// Purging a subject that holds no schedule is refused.
	if _, err := publishSchedule(js, "out.p", "plain", nil); err != nil {
		t.Fatal(err)
	}
	_, err := publishSchedule(js, "out.a", "", map[string]string{"Nats-Schedule-Next": "purge", "Nats-Scheduler": "out.p"})
	var apiErr *njs.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode != njs.ErrorCode(api.ErrMessageSchedulesSchedulerInval) {
		t.Fatalf("purging a plain subject: %v, want 10212", err)
	}
	if info, err := s.Info(ctx); err != nil || info.State.Msgs != 1 {
		t.Fatalf("refused messages were stored: %+v %v", info, err)
	}
}

// TestScheduleConfigRules: allow_msg_schedules turns on roll-ups (refused
// in pedantic mode instead), requires API level 2, excludes counters,
// discard new, mirrors and sources, and cannot be turned off.
func TestScheduleConfigRules(t *testing.T) {
	ts := startServer(t, Config{})
	nc := ts.connect()
	create := func(name, body string) api.StreamCreateResponse {
		t.Helper()
		var r api.StreamCreateResponse
		if err := json.Unmarshal(request(t, nc, "$JS.API.STREAM.CREATE."+name, body).Data, &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := create("OK", `{"name":"OK","subjects":["ok.>"],"allow_msg_schedules":true,"deny_purge":true}`)
	if r.Error != nil {
		t.Fatalf("create: %+v", r.Error)
	}
	if !r.Config.AllowRollup || r.Config.DenyPurge || r.Config.Metadata[api.MetaRequiredLevel] != "2" {
		t.Fatalf("config: rollup %v deny_purge %v metadata %v", r.Config.AllowRollup, r.Config.DenyPurge, r.Config.Metadata)
	}
	for _, c := range []struct {
		name, body string
		code       api.ErrCode
		desc       string
	}{
		{"C", `{"name":"C","subjects":["c"],"allow_msg_schedules":true,"allow_msg_counter":true}`, api.ErrStreamInvalidConfig, "counter stream cannot use message schedules"},
		{"D", `{"name":"D","subjects":["d"],"allow_msg_schedules":true,"discard":"new"}`, api.ErrStreamInvalidConfig, "message scheduling cannot use discard new"},
		{"P", `{"name":"P","subjects":["p"],"allow_msg_schedules":true,"pedantic":true}`, api.ErrStreamInvalidConfig, "message scheduling cannot be set if roll-ups are disabled"},
		{"M", `{"name":"M","allow_msg_schedules":true,"mirror":{"name":"OK"}}`, api.ErrMirrorWithMsgSchedules, "stream mirrors can not also schedule messages"},
		{"SRC", `{"name":"SRC","subjects":["src"],"allow_msg_schedules":true,"sources":[{"name":"OK"}]}`, api.ErrSourceWithMsgSchedules, "stream source can not also schedule messages"},
	} {
		r := create(c.name, c.body)
		if r.Error == nil || r.Error.ErrCode != c.code || !strings.Contains(r.Error.Description, c.desc) {
			t.Fatalf("%s: %+v, want %d %q", c.name, r.Error, c.code, c.desc)
		}
	}
	var u api.StreamCreateResponse
	if err := json.Unmarshal(request(t, nc, "$JS.API.STREAM.UPDATE.OK", `{"name":"OK","subjects":["ok.>"],"allow_rollup_hdrs":true}`).Data, &u); err != nil {
		t.Fatal(err)
	}
	if u.Error == nil || !strings.Contains(u.Error.Description, "message schedules can not be disabled") {
		t.Fatalf("update turning schedules off: %+v", u.Error)
	}
}

// TestScheduleSurvivesRestart: a pending schedule fires after a clean
// restart and after a crash (a copy of the store taken while the server
// runs, as kill -9 leaves it).
func TestScheduleSurvivesRestart(t *testing.T) {
	ts := startServer(t, Config{})
	js, _ := njs.New(ts.connect())
	schedStream(t, js)
	if _, err := publishSchedule(js, "sched.r", "later", map[string]string{
		"Nats-Schedule": atIn(4 * time.Second), "Nats-Schedule-Target": "out.r",
	}); err != nil {
		t.Fatal(err)
	}
	crashed := t.TempDir()
	if err := os.CopyFS(crashed, os.DirFS(ts.cfg.StoreDir)); err != nil {
		t.Fatal(err)
	}
	ts = ts.restart()
	js, _ = njs.New(ts.connect())
	s, err := js.Stream(context.Background(), "S")
	if err != nil {
		t.Fatal(err)
	}
	if m := waitLast(t, s, "out.r", 0, 20*time.Second); string(m.Data) != "later" {
		t.Fatalf("produced %q", m.Data)
	}
	waitGone(t, s, 1, 10*time.Second)
	ts.stop()

	cfg := ts.cfg
	cfg.StoreDir = crashed
	ts = startServer(t, cfg)
	js, _ = njs.New(ts.connect())
	if s, err = js.Stream(context.Background(), "S"); err != nil {
		t.Fatal(err)
	}
	waitLast(t, s, "out.r", 0, 20*time.Second)
	waitGone(t, s, 1, 10*time.Second)
}

// TestScheduleFiredBeforeCrashNotRefired: a schedule whose produced message
// reached the disk but whose removal did not (the server died in between)
// is removed at open, not fired again.
func TestScheduleFiredBeforeCrashNotRefired(t *testing.T) {
	ts := startServer(t, Config{})
	js, _ := njs.New(ts.connect())
	schedStream(t, js)
	if _, err := publishSchedule(js, "sched.k", "once", map[string]string{
		"Nats-Schedule": atIn(time.Hour), "Nats-Schedule-Target": "out.k",
	}); err != nil {
		t.Fatal(err)
	}
	// The produced message as the stream stores it, written past the
	// stream so that the schedule's removal never happens.
	st := ts.js.lookup("S").store
	hdr := []byte("NATS/1.0\r\nNats-Scheduler: sched.k\r\nNats-Schedule-Next: purge\r\n\r\n")
	if _, _, err := st.Append("out.k", hdr, []byte("once")); err != nil {
		t.Fatal(err)
	}
	ts = ts.restart()
	js, _ = njs.New(ts.connect())
	s, err := js.Stream(context.Background(), "S")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetMsg(context.Background(), 1); !errors.Is(err, njs.ErrMsgNotFound) {
		t.Fatalf("the fired schedule is still stored after the restart: %v", err)
	}
	if n := ts.js.lookup("S").sched.n.Load(); n != 0 {
		t.Fatalf("%d schedules pending after the restart, want 0", n)
	}
}

// TestScheduleCronInZone: a cron schedule with a time zone fires every
// second, naming its next firing in that zone.
func TestScheduleCronInZone(t *testing.T) {
	ts := startServer(t, Config{})
	js, _ := njs.New(ts.connect())
	s := schedStream(t, js)
	if _, err := publishSchedule(js, "sched.c", "cron", map[string]string{
		"Nats-Schedule": "* * * * * *", "Nats-Schedule-Time-Zone": "Asia/Kolkata", "Nats-Schedule-Target": "out.c",
	}); err != nil {
		t.Fatal(err)
	}
	first := waitLast(t, s, "out.c", 0, 20*time.Second)
	second := waitLast(t, s, "out.c", first.Sequence, 20*time.Second)
	next := second.Header.Get("Nats-Schedule-Next")
	if !strings.HasSuffix(next, "+05:30") {
		t.Fatalf("next firing %q is not in the schedule's zone", next)
	}
}

// TestScheduleReplacedByPlainMessage: a message without a schedule on a
// schedule's subject cancels it; a produced message landing on another
// schedule's subject does not.
func TestScheduleReplacedByPlainMessage(t *testing.T) {
	ts := startServer(t, Config{})
	js, _ := njs.New(ts.connect())
	s := schedStream(t, js)
	if _, err := publishSchedule(js, "sched.x", "", map[string]string{"Nats-Schedule": atIn(time.Hour), "Nats-Schedule-Target": "out.x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := publishSchedule(js, "sched.x", "plain", nil); err != nil {
		t.Fatal(err)
	}
	if n := ts.js.lookup("S").sched.n.Load(); n != 0 {
		t.Fatalf("%d schedules pending after a plain message replaced the only one", n)
	}
	// sched.a fires soon onto sched.b, which holds a later schedule of its own.
	if _, err := publishSchedule(js, "sched.b", "b", map[string]string{"Nats-Schedule": atIn(3 * time.Second), "Nats-Schedule-Target": "out.b"}); err != nil {
		t.Fatal(err)
	}
	if _, err := publishSchedule(js, "sched.a", "a", map[string]string{"Nats-Schedule": atIn(0), "Nats-Schedule-Target": "sched.b"}); err != nil {
		t.Fatal(err)
	}
	waitLast(t, s, "out.b", 0, 20*time.Second)
}

// TestScheduleInAtomicBatch: a schedule stored by an atomic batch gets its
// rollup and fires like a published one; an invalid one fails the batch
// with the schedule's error.
func TestScheduleInAtomicBatch(t *testing.T) {
	ts := startServer(t, Config{})
	nc := ts.connect()
	js, _ := njs.New(nc)
	s, err := js.CreateStream(context.Background(), njs.StreamConfig{
		Name: "S", Subjects: []string{"sched.>", "out.>"}, AllowMsgSchedules: true, AllowAtomicPublish: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	batchMsg(t, nc, "out.before", "b1", 1, "")
	r := batchMsg(t, nc, "sched.b", "b1", 2, "1", "Nats-Schedule", atIn(time.Second), "Nats-Schedule-Target", "out.b")
	if got, want := string(r.Data), `{"stream":"S","seq":2,"batch":"b1","count":2}`; got != want {
		t.Fatalf("commit PubAck %s, want %s", got, want)
	}
	if m, err := s.GetMsg(context.Background(), 2); err != nil || m.Header.Get("Nats-Rollup") != "sub" {
		t.Fatalf("stored schedule: %v %v", m, err)
	}
	waitLast(t, s, "out.b", 0, 20*time.Second)
	waitGone(t, s, 2, 10*time.Second)

	batchMsg(t, nc, "out.before", "b2", 1, "")
	r = batchMsg(t, nc, "sched.c", "b2", 2, "1", "Nats-Schedule", "@every 10ms", "Nats-Schedule-Target", "out.c")
	wantBatchError(t, r, api.ErrMessageSchedulesPatternInvalid, "message schedules pattern is invalid")
}

// TestScheduleAtExtremes: an @at at the Unix epoch is in the past and
// fires at once; one in the year 9999 (beyond what nanoseconds since the
// epoch hold) waits instead of wrapping round into the past.
func TestScheduleAtExtremes(t *testing.T) {
	ts := startServer(t, Config{})
	js, _ := njs.New(ts.connect())
	s := schedStream(t, js)
	if _, err := publishSchedule(js, "sched.far", "", map[string]string{"Nats-Schedule": "@at 9999-12-31T23:59:59Z", "Nats-Schedule-Target": "out.far"}); err != nil {
		t.Fatal(err)
	}
	if _, err := publishSchedule(js, "sched.epoch", "", map[string]string{"Nats-Schedule": "@at 1970-01-01T00:00:00Z", "Nats-Schedule-Target": "out.epoch"}); err != nil {
		t.Fatal(err)
	}
	waitLast(t, s, "out.epoch", 0, 20*time.Second)
	waitGone(t, s, 2, 10*time.Second)
	tbl := &ts.js.lookup("S").sched
	tbl.mu.Lock()
	e := tbl.bySubj["sched.far"]
	tbl.mu.Unlock()
	if e == nil || e.at != math.MaxInt64 || e.inflight {
		t.Fatalf("the far schedule: %+v", e)
	}
}

// TestScheduleEverySurvivesRestart: a repeating schedule goes on firing
// after a clean restart, from the next firing its last produced message
// named.
func TestScheduleEverySurvivesRestart(t *testing.T) {
	ts := startServer(t, Config{})
	js, _ := njs.New(ts.connect())
	s := schedStream(t, js)
	if _, err := publishSchedule(js, "sched.e", "tick", map[string]string{"Nats-Schedule": "@every 1s", "Nats-Schedule-Target": "out.e"}); err != nil {
		t.Fatal(err)
	}
	before := waitLast(t, s, "out.e", 0, 20*time.Second)
	ts = ts.restart()
	js, _ = njs.New(ts.connect())
	s, err := js.Stream(context.Background(), "S")
	if err != nil {
		t.Fatal(err)
	}
	after := waitLast(t, s, "out.e", before.Sequence, 20*time.Second)
	waitLast(t, s, "out.e", after.Sequence, 20*time.Second)
	if _, err := s.GetMsg(context.Background(), 1); err != nil {
		t.Fatalf("the repeating schedule is gone after the restart: %v", err)
	}
}

// TestScheduleSource: a schedule with Nats-Schedule-Source produces the
// last message of that subject (body and headers); with none there, its
// own.
func TestScheduleSource(t *testing.T) {
	ts := startServer(t, Config{})
	js, _ := njs.New(ts.connect())
	s := schedStream(t, js)
	if _, err := publishSchedule(js, "out.src", "fresh", map[string]string{"X-From": "src"}); err != nil {
		t.Fatal(err)
	}
	for subj, target := range map[string]string{"sched.s1": "out.s1", "sched.s2": "out.s2"} {
		src := "out.src"
		if subj == "sched.s2" {
			src = "out.empty"
		}
		if _, err := publishSchedule(js, subj, "own", map[string]string{
			"Nats-Schedule": atIn(time.Second), "Nats-Schedule-Target": target, "Nats-Schedule-Source": src, "X-From": "schedule",
		}); err != nil {
			t.Fatal(err)
		}
	}
	if m := waitLast(t, s, "out.s1", 0, 20*time.Second); string(m.Data) != "fresh" || m.Header.Get("X-From") != "src" || m.Header.Get("Nats-Scheduler") != "sched.s1" {
		t.Fatalf("produced from the source: %q %v", m.Data, m.Header)
	}
	if m := waitLast(t, s, "out.s2", 0, 20*time.Second); string(m.Data) != "own" || m.Header.Get("X-From") != "schedule" || m.Header.Get("Nats-Schedule-Source") != "" {
		t.Fatalf("produced without a source message: %q %v", m.Data, m.Header)
	}
}
