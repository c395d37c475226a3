package crashtest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The KV model for porcupine: each key holds a string ("" = no value); a
// put sets it, a get observes it.
type kvInput struct {
	put        bool
	key, value string
}

type kvOutput struct {
	value string
	found bool
}

var kvModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		for _, op := range history {
			k := op.Input.(kvInput).key
			byKey[k] = append(byKey[k], op)
		}
		var out [][]porcupine.Operation
		for _, ops := range byKey {
			out = append(out, ops)
		}
		return out
	},
	Init: func() interface{} { return "" },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		in := input.(kvInput)
		if in.put {
			return true, in.value
		}
		out := output.(kvOutput)
		if !out.found {
			return state.(string) == "", state
		}
		return out.value == state.(string), state
	},
	DescribeOperation: func(input, output interface{}) string {
		in := input.(kvInput)
		if in.put {
			return fmt.Sprintf("put(%s, %s)", in.key, in.value)
		}
		out := output.(kvOutput)
		return fmt.Sprintf("get(%s) -> %q %v", in.key, out.value, out.found)
	},
}

// TestClusterLinearizableKV runs concurrent KV puts and gets on an R3
// bucket through all three servers while the bucket's leader is killed
// (SIGKILL) and restarted, and checks the history with porcupine: every
// read sees the latest acknowledged write, across the leader change. A put
// that failed or timed out may or may not have happened; it is recorded as
// still in flight at the end. JETWAL_LIN_SECONDS sets the workload's
// length (make cluster-chaos runs 30 s, make test 6 s). The servers'
// routes need credentials and mutual TLS, so the raft groups run over
// authenticated, encrypted connections through the leader kills.
func TestClusterLinearizableKV(t *testing.T) {
	seconds := envInt("JETWAL_LIN_SECONDS", 6)
	nodes, nc, js, try := startProcClusterWith(t, true)
	defer nc.Close()
	try("create bucket", func(ctx context.Context) error {
		_, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "LIN", Replicas: 3})
		return err
	})
	var mu sync.Mutex
	var ops []porcupine.Operation
	start := time.Now()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for c := range 4 {
		conn, err := nats.Connect(nodes[c%3].p.url+","+nodes[(c+1)%3].p.url+","+nodes[(c+2)%3].p.url,
			nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		cjs, _ := jetstream.New(conn)
		wg.Add(1)
		go func() {
			defer wg.Done()
			var kv jetstream.KeyValue
			for kv == nil {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				kv, _ = cjs.KeyValue(ctx, "LIN")
				cancel()
			}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				in := kvInput{put: rand.IntN(2) == 0, key: fmt.Sprintf("k%d", rand.IntN(3)), value: fmt.Sprintf("c%d-%d", c, i)}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				call := time.Since(start).Nanoseconds()
				var out kvOutput
				var err error
				if in.put {
					_, err = kv.PutString(ctx, in.key, in.value)
				} else {
					var e jetstream.KeyValueEntry
					e, err = kv.Get(ctx, in.key)
					if errors.Is(err, jetstream.ErrKeyNotFound) {
						err = nil
					} else if err == nil {
						out = kvOutput{value: string(e.Value()), found: true}
					}
				}
				ret := time.Since(start).Nanoseconds()
				cancel()
				if err != nil {
					if !in.put {
						continue // a failed read observed nothing
					}
					ret = math.MaxInt64 // a failed write may still happen
				}
				mu.Lock()
				ops = append(ops, porcupine.Operation{ClientId: c, Input: in, Call: call, Output: out, Return: ret})
				mu.Unlock()
			}
		}()
	}
	total := time.Duration(seconds) * time.Second
	time.Sleep(total / 3)
	victim := leaderOf(t, nodes, js, try, "KV_LIN")
	victim.p.kill()
	t.Logf("killed the bucket's leader %s", victim.name)
	time.Sleep(total / 3)
	victim.start(t)
	time.Sleep(total / 3)
	close(stop)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	puts, gets := 0, 0
	for _, op := range ops {
		if op.Input.(kvInput).put {
			puts++
		} else {
			gets++
		}
	}
	t.Logf("%d puts, %d gets", puts, gets)
	if puts == 0 || gets == 0 {
		t.Fatal("no operations completed")
	}
	switch res := porcupine.CheckOperationsTimeout(kvModel, ops, 2*time.Minute); res {
	case porcupine.Ok:
	case porcupine.Unknown:
		t.Logf("linearizability check timed out (history of %d operations)", len(ops))
	default:
		t.Fatalf("history of %d operations is not linearizable; stale reads: %s", len(ops), summarize(staleReads(ops)))
	}
}

// staleReads lists reads that returned a value overwritten before they
// began (the plainest kind of linearizability violation), for the failure
// message.
func staleReads(ops []porcupine.Operation) []string {
	puts := map[string]porcupine.Operation{}
	for _, op := range ops {
		if in := op.Input.(kvInput); in.put {
			puts[in.value] = op
		}
	}
	var out []string
	for _, g := range ops {
		in := g.Input.(kvInput)
		if in.put {
			continue
		}
		o := g.Output.(kvOutput)
		if !o.found {
			for _, p := range ops {
				if pi := p.Input.(kvInput); pi.put && pi.key == in.key && p.Return < g.Call {
					out = append(out, fmt.Sprintf("get(%s) [%d,%d] found nothing after put %q [%d,%d]", in.key, g.Call, g.Return, pi.value, p.Call, p.Return))
					break
				}
			}
			continue
		}
		p1, ok := puts[o.value]
		if !ok {
			out = append(out, fmt.Sprintf("get(%s) at %d returned %q, never written", in.key, g.Call, o.value))
			continue
		}
		if p1.Call > g.Return {
			out = append(out, fmt.Sprintf("get(%s) [%d,%d] returned %q written later [%d,%d]", in.key, g.Call, g.Return, o.value, p1.Call, p1.Return))
			continue
		}
		for _, p2 := range ops {
			i2 := p2.Input.(kvInput)
			if i2.put && i2.key == in.key && p2.Call > p1.Return && p2.Return < g.Call {
				out = append(out, fmt.Sprintf("get(%s) [%d,%d] returned %q [%d,%d], overwritten by %q [%d,%d]",
					in.key, g.Call, g.Return, o.value, p1.Call, p1.Return, i2.value, p2.Call, p2.Return))
				break
			}
		}
	}
	return out
}
