package crashtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

const (
	streamName   = "CRASH"
	consumerName = "C"
)

// killModel is what the clients were told, across all cycles.
type killModel struct {
	mu        sync.Mutex
	acked     map[uint64]*nats.Msg // PubAck received: must survive every crash
	floor     uint64               // LastSeq when this cycle's server started
	confirmed map[uint64]bool      // consumer acks the server confirmed (AckSync)
	ackCount  int                  // PubAcks received in all cycles
	delivered int
	errs      []string
}

func (m *killModel) fail(format string, args ...any) {
	m.mu.Lock()
	m.errs = append(m.errs, fmt.Sprintf(format, args...))
	m.mu.Unlock()
}

// TestKill9 kills a `jetwal serve -js --sync=always` process with SIGKILL
// at random moments while async publishes are in flight and a durable pull
// consumer fetches and acks with confirmed acks, restarts it, and checks
// that every acknowledged message is there unchanged, that no sequence is
// handed out twice, that the consumer's ack floor is not below a confirmed
// ack and that no confirmed message is delivered again. Cycles:
// JETWAL_CRASH_CYCLES (default 20; `make crash` runs 200); seed:
// JETWAL_CRASH_SEED.
func TestKill9(t *testing.T) {
	runKillCycles(t, "--sync=always", true)
}

// TestKill9SyncInterval is TestKill9 with --sync=200ms: acknowledged
// messages may be lost, but only as a tail (a lost message is never followed
// by a surviving acknowledged one of the same cycle), nothing that survives
// is corrupt, and sequences still never repeat for surviving messages.
func TestKill9SyncInterval(t *testing.T) {
	runKillCycles(t, "--sync=200ms", false)
}

func runKillCycles(t *testing.T, syncFlag string, durable bool) {
	cycles := envInt("JETWAL_CRASH_CYCLES", 20)
	if !durable {
		cycles = max(cycles/4, 5)
	}
	sd := seed(t)
	t.Logf("seed %d (replay: JETWAL_CRASH_SEED=%d), %d cycles, %s", sd, sd, cycles, syncFlag)
	rng := rand.New(rand.NewPCG(sd, 3))
	store := t.TempDir()
	port := freePort(t)
	m := &killModel{acked: map[uint64]*nats.Msg{}, confirmed: map[uint64]bool{}}
	var lostTotal, ackedTotal int
	verified := map[uint64]bool{}
	for c := 0; c < cycles; c++ {
		p := startServer(t, store, port, syncFlag)
		nc, err := nats.Connect(p.url, nats.Timeout(5*time.Second), nats.NoReconnect(), quiet)
		if err != nil {
			t.Fatalf("cycle %d: connect: %v", c, err)
		}
		js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(256))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if c == 0 {
			if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: streamName, Subjects: []string{"crash.>"}, Storage: jetstream.FileStorage}); err != nil {
				t.Fatalf("create stream: %v", err)
			}
			if _, err := js.CreateOrUpdateConsumer(ctx, streamName, jetstream.ConsumerConfig{
				Durable: consumerName, AckPolicy: jetstream.AckExplicitPolicy, AckWait: time.Minute,
			}); err != nil {
				t.Fatalf("create consumer: %v", err)
			}
		}
		stream, err := js.Stream(ctx, streamName)
		if err != nil {
			t.Fatalf("cycle %d: stream after restart: %v\n%s", c, err, p.logs.String())
		}
		lost := verifyAcked(t, ctx, stream, m, verified, durable, c)
		lostTotal += lost
		info, err := stream.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		m.floor = info.State.LastSeq
		if durable {
			// Under an interval policy confirmed acks are flushed with the
			// interval too, so only --sync=always promises them.
			checkConsumerFloor(t, ctx, js, m, c)
		}

		// Publish and consume until a random moment, then kill -9.
		var killed atomic.Bool
		var wg sync.WaitGroup
		futs := make(chan pendingPub, 1024)
		wg.Add(1)
		go func() { defer wg.Done(); publishLoop(js, c, &killed, futs) }()
		collectDone := make(chan struct{})
		stopCollect := make(chan struct{})
		go func() { defer close(collectDone); collectAcks(m, futs, stopCollect) }()
		consCtx, consCancel := context.WithCancel(context.Background())
		wg.Add(1)
		go func() { defer wg.Done(); consumeLoop(consCtx, js, m, durable) }()
		time.Sleep(time.Duration(30+rng.IntN(250)) * time.Millisecond)
		killed.Store(true)
		p.kill()
		time.Sleep(50 * time.Millisecond) // acks already read by the client resolve
		consCancel()
		nc.Close()
		wg.Wait()
		close(stopCollect)
		<-collectDone
		cancel()
		m.mu.Lock()
		errs := m.errs
		ackedTotal = m.ackCount
		m.mu.Unlock()
		if len(errs) > 0 {
			t.Fatalf("cycle %d (seed %d): %v\nserver log:\n%s", c, sd, errs, p.logs.String())
		}
	}
	// A last restart checks the last cycle and everything once more.
	p := startServer(t, store, port, syncFlag)
	nc, err := nats.Connect(p.url, nats.Timeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	stream, err := js.Stream(ctx, streamName)
	if err != nil {
		t.Fatal(err)
	}
	lostTotal += verifyAcked(t, ctx, stream, m, verified, durable, cycles)
	if durable {
		// Everything again: earlier cycles' messages survived later
		// crashes. Beyond 20000 messages, a seeded sample of them.
		all := map[uint64]bool{}
		m.mu.Lock()
		if n := len(m.acked); n > 20000 {
			for q := range m.acked {
				if rng.IntN(n) >= 20000 {
					all[q] = true // skipped
				}
			}
		}
		m.mu.Unlock()
		lostTotal += verifyAcked(t, ctx, stream, m, all, durable, cycles)
	}
	if durable {
		checkConsumerFloor(t, ctx, js, m, cycles)
	}
	p.stop(t)
	t.Logf("%s: %d cycles, %d messages acknowledged, %d lost, %d consumer acks confirmed, %d deliveries",
		syncFlag, cycles, ackedTotal, lostTotal, len(m.confirmed), m.delivered)
	if durable && lostTotal > 0 {
		t.Fatalf("%d acknowledged messages lost under --sync=always", lostTotal)
	}
}

// quiet drops nats.go's asynchronous error reports: the tests kill the
// server under the client on purpose.
var quiet = nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {})

type pendingPub struct {
	fut jetstream.PubAckFuture
	msg *nats.Msg
}

func publishLoop(js jetstream.JetStream, cycle int, killed *atomic.Bool, futs chan<- pendingPub) {
	defer close(futs)
	for i := 0; !killed.Load(); i++ {
		msg := nats.NewMsg(fmt.Sprintf("crash.%d", i%5))
		msg.Header.Set("Cycle", strconv.Itoa(cycle))
		msg.Header.Set("I", strconv.Itoa(i))
		msg.Data = payload(cycle, i)
		fut, err := js.PublishMsgAsync(msg)
		if err != nil {
			if errors.Is(err, nats.ErrConnectionClosed) {
				return
			}
			time.Sleep(time.Millisecond) // stalled: too many in flight
			continue
		}
		futs <- pendingPub{fut: fut, msg: msg}
	}
}

func payload(cycle, i int) []byte {
	r := rand.New(rand.NewPCG(uint64(cycle), uint64(i)))
	b := make([]byte, 16+r.IntN(600))
	for j := range b {
		b[j] = byte(r.Uint32())
	}
	return b
}

func collectAcks(m *killModel, futs <-chan pendingPub, stop <-chan struct{}) {
	for pf := range futs {
		select {
		case ack := <-pf.fut.Ok():
			m.mu.Lock()
			if prev, dup := m.acked[ack.Sequence]; dup {
				m.errs = append(m.errs, fmt.Sprintf("sequence %d acknowledged twice (%v and %v)", ack.Sequence, prev.Header, pf.msg.Header))
			} else if ack.Sequence <= m.floor {
				m.errs = append(m.errs, fmt.Sprintf("sequence %d reused: the restarted server's last sequence was %d", ack.Sequence, m.floor))
			}
			m.acked[ack.Sequence] = pf.msg
			m.ackCount++
			m.mu.Unlock()
		case <-pf.fut.Err():
		case <-stop:
		}
	}
}

// consumeLoop fetches from the durable consumer and acks each message with
// a confirmed ack.
func consumeLoop(ctx context.Context, js jetstream.JetStream, m *killModel, durable bool) {
	cons, err := js.Consumer(ctx, streamName, consumerName)
	if err != nil {
		return
	}
	for ctx.Err() == nil {
		batch, err := cons.Fetch(50, jetstream.FetchMaxWait(300*time.Millisecond))
		if err != nil {
			return
		}
		for msg := range batch.Messages() {
			meta, err := msg.Metadata()
			if err != nil {
				m.fail("delivery without metadata: %v", err)
				continue
			}
			q := meta.Sequence.Stream
			m.mu.Lock()
			m.delivered++
			again := m.confirmed[q]
			m.mu.Unlock()
			if again && durable {
				m.fail("stream sequence %d delivered again after its ack was confirmed", q)
			}
			actx, acancel := context.WithTimeout(ctx, 5*time.Second)
			err = msg.DoubleAck(actx)
			acancel()
			if err == nil {
				m.mu.Lock()
				m.confirmed[q] = true
				m.mu.Unlock()
			}
		}
	}
}

// checkConsumerFloor: after a restart the ack floor is at least the highest
// sequence below which every ack was confirmed.
func checkConsumerFloor(t *testing.T, ctx context.Context, js jetstream.JetStream, m *killModel, cycle int) {
	t.Helper()
	cons, err := js.Consumer(ctx, streamName, consumerName)
	if err != nil {
		t.Fatalf("cycle %d: consumer after restart: %v", cycle, err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	want := uint64(0)
	for m.confirmed[want+1] {
		want++
	}
	m.mu.Unlock()
	if info.AckFloor.Stream < want {
		t.Fatalf("cycle %d: ack floor %d below confirmed acks up to %d", cycle, info.AckFloor.Stream, want)
	}
}

// verifyAcked checks the acknowledged messages not yet in done and adds
// them; it returns how many are missing. Under durable sync any missing or
// different message fails the test; otherwise losses must be a tail of
// their cycle.
func verifyAcked(t *testing.T, ctx context.Context, stream jetstream.Stream, m *killModel, done map[uint64]bool, durable bool, cycle int) int {
	t.Helper()
	m.mu.Lock()
	var seqs []uint64
	for q := range m.acked {
		if !done[q] {
			seqs = append(seqs, q)
		}
	}
	m.mu.Unlock()
	sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
	lost := 0
	lostCycle := map[string]uint64{} // cycle -> first lost sequence
	for _, q := range seqs {
		m.mu.Lock()
		want := m.acked[q]
		m.mu.Unlock()
		done[q] = true
		got, err := stream.GetMsg(ctx, q)
		wc := want.Header.Get("Cycle")
		if err != nil {
			if !errors.Is(err, jetstream.ErrMsgNotFound) {
				t.Fatalf("cycle %d: get %d: %v", cycle, q, err)
			}
			if durable {
				t.Fatalf("cycle %d: acknowledged message %d (%v) lost", cycle, q, want.Header)
			}
			lost++
			// Lost with the unsynced tail: the restarted server does not
			// know the sequence and may hand it out again.
			m.mu.Lock()
			delete(m.acked, q)
			m.mu.Unlock()
			if _, ok := lostCycle[wc]; !ok {
				lostCycle[wc] = q
			}
			continue
		}
		if first, ok := lostCycle[wc]; ok {
			t.Fatalf("cycle %d: message %d survived although %d, acknowledged before it in the same cycle, was lost", cycle, q, first)
		}
		if got.Subject != want.Subject || !bytes.Equal(got.Data, want.Data) ||
			got.Header.Get("Cycle") != wc || got.Header.Get("I") != want.Header.Get("I") {
			t.Fatalf("cycle %d: message %d differs: got %s %v %d bytes, want %s %v %d bytes",
				cycle, q, got.Subject, got.Header, len(got.Data), want.Subject, want.Header, len(want.Data))
		}
	}
	return lost
}
