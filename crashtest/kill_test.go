package crashtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
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
	runKillCycles(t, "--sync=always", envInt("JETWAL_CRASH_CYCLES", 20))
}

// TestKill9SyncInterval is TestKill9 with --sync=200ms, held to the same
// checks: under an interval policy an acknowledgement (PubAck or confirmed
// consumer ack) means written to the operating system, which a process
// crash cannot lose; only a power loss may lose the last interval.
func TestKill9SyncInterval(t *testing.T) {
	runKillCycles(t, "--sync=200ms", max(envInt("JETWAL_CRASH_CYCLES", 20)/4, 5))
}

// TestKill9SyncNever: the same with --sync=never.
func TestKill9SyncNever(t *testing.T) {
	runKillCycles(t, "--sync=never", max(envInt("JETWAL_CRASH_CYCLES", 20)/4, 5))
}

func runKillCycles(t *testing.T, syncFlag string, cycles int) {
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
		lostTotal += verifyAcked(t, ctx, stream, m, verified, c)
		info, err := stream.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		m.floor = info.State.LastSeq
		checkConsumerFloor(t, ctx, js, m, c)

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
		go func() { defer wg.Done(); consumeLoop(consCtx, js, m) }()
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
			t.Fatalf("cycle %d (seed %d): %s\nserver log:\n%s", c, sd, summarize(errs), p.logs.String())
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
	lostTotal += verifyAcked(t, ctx, stream, m, verified, cycles)
	// Everything again: earlier cycles' messages survived later crashes.
	// Beyond 20000 messages, a seeded sample of them.
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
	lostTotal += verifyAcked(t, ctx, stream, m, all, cycles)
	checkConsumerFloor(t, ctx, js, m, cycles)
	p.stop(t)
	t.Logf("%s: %d cycles, %d messages acknowledged, %d lost, %d consumer acks confirmed, %d deliveries",
		syncFlag, cycles, ackedTotal, lostTotal, len(m.confirmed), m.delivered)
	if lostTotal > 0 {
		t.Fatalf("%d acknowledged messages lost under %s", lostTotal, syncFlag)
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
func consumeLoop(ctx context.Context, js jetstream.JetStream, m *killModel) {
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
			if again {
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
// them. A missing or different message fails the test, with a summary of
// every loss: the count and the first few sequences. It returns the number
// lost (0 when it returns at all).
func verifyAcked(t *testing.T, ctx context.Context, stream jetstream.Stream, m *killModel, done map[uint64]bool, cycle int) int {
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
	var problems []string
	lost := 0
	for _, q := range seqs {
		m.mu.Lock()
		want := m.acked[q]
		m.mu.Unlock()
		done[q] = true
		got, err := stream.GetMsg(ctx, q)
		if err != nil {
			if !errors.Is(err, jetstream.ErrMsgNotFound) {
				t.Fatalf("cycle %d: get %d: %v", cycle, q, err)
			}
			lost++
			problems = append(problems, fmt.Sprintf("acknowledged message %d (%v) lost", q, want.Header))
			continue
		}
		if got.Subject != want.Subject || !bytes.Equal(got.Data, want.Data) ||
			got.Header.Get("Cycle") != want.Header.Get("Cycle") || got.Header.Get("I") != want.Header.Get("I") {
			problems = append(problems, fmt.Sprintf("message %d differs: got %s %v %d bytes, want %s %v %d bytes",
				q, got.Subject, got.Header, len(got.Data), want.Subject, want.Header, len(want.Data)))
		}
	}
	if len(problems) > 0 {
		t.Fatalf("cycle %d: %d of %d acknowledged messages lost or changed: %s", cycle, len(problems), len(seqs), summarize(problems))
	}
	return lost
}

// summarize shortens a list of failures to its count and first examples.
func summarize(errs []string) string {
	const show = 5
	if len(errs) <= show {
		return strings.Join(errs, "; ")
	}
	return fmt.Sprintf("%d failures, first %d: %s", len(errs), show, strings.Join(errs[:show], "; "))
}
