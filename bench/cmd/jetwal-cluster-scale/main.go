// Command jetwal-cluster-scale measures what many replicated streams cost
// a cluster (issue 49 §1): three jetwal servers, then three nats-server
// v2.15.2, one cluster at a time on this machine, each given N R3 file
// streams with one durable consumer each. Per cluster it reports the
// creation time (total and per stream), each server's idle CPU over 10 s,
// resident set, open descriptors and goroutines (Go's goroutine profile,
// which both serve with --profile), the time from restarting one server
// until every stream has a leader and every replica is current, and the
// time from a SIGKILL of the meta leader until every stream and consumer
// has a leader again. `make bench-cluster-scale` runs it.
//
//	jetwal-cluster-scale -jetwal .bin/jetwal -nats-server .bin/nats-server \
//	    [-streams 100] [-csv bench/results/cluster-scale-100.csv] [-only jetwal]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// profileDir, when set (-profiles), receives the servers' profiles.
var profileDir string

// result is one cluster's figures, by metric name.
type result map[string]float64

// metric names, in report order, with their units.
var metrics = []struct{ key, unit string }{
	{"create_total", "s"},
	{"stream_create_mean", "ms"},
	{"stream_create_p50", "ms"},
	{"stream_create_p99", "ms"},
	{"stream_create_retries", "n"},
	{"consumer_create_mean", "ms"},
	{"consumer_create_retries", "n"},
	{"idle_cpu_per_server", "% core"},
	{"rss_per_server", "MiB"},
	{"rss_per_stream_per_server", "KiB"},
	{"fds_per_server", "n"},
	{"goroutines_per_server", "n"},
	{"restart_one_until_current", "s"},
	{"meta_leader_kill_until_all_leaders", "s"},
}

func main() {
	jetwalBin := flag.String("jetwal", ".bin/jetwal", "jetwal binary")
	natsBin := flag.String("nats-server", ".bin/nats-server", "nats-server binary")
	n := flag.Int("streams", 100, "R3 streams to create (each with one durable)")
	csvPath := flag.String("csv", "", "CSV file to write the table to")
	only := flag.String("only", "", "run one cluster only: jetwal or nats-server")
	flag.StringVar(&profileDir, "profiles", "", "directory to save each server's idle CPU and heap profiles in")
	flag.Parse()
	root, err := os.MkdirTemp("", "jetwal-cluster-scale-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(root)
	res := map[string]result{}
	var failed []string
	for _, kind := range []string{"jetwal", "nats-server"} {
		if *only != "" && *only != kind {
			continue
		}
		bin := map[string]string{"jetwal": *jetwalBin, "nats-server": *natsBin}[kind]
		c, err := newCluster(kind, bin, root)
		if err != nil {
			fail(err)
		}
		r := result{"consumer_create_retries": 0, "stream_create_retries": 0}
		err = run(c, *n, r)
		c.stopAll()
		res[kind] = r
		if err != nil {
			// What was measured before the failure is still reported.
			failed = append(failed, fmt.Sprintf("%s: %v", kind, err))
		}
	}
	table := render(res, *n)
	fmt.Print(table)
	for _, f := range failed {
		fmt.Println("FAILED", f)
	}
	if *csvPath != "" {
		if err := os.WriteFile(*csvPath, []byte(csvOf(res, *n)), 0o644); err != nil {
			fail(err)
		}
	}
	if len(failed) > 0 {
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "jetwal-cluster-scale:", err)
	os.Exit(1)
}

func progress(c *cluster, format string, a ...any) {
	fmt.Fprintf(os.Stderr, "%s %-11s %s\n", time.Now().Format("15:04:05"), c.kind, fmt.Sprintf(format, a...))
}

// run measures one cluster into r.
func run(c *cluster, n int, r result) error {
	for _, nd := range c.nodes {
		if err := nd.start(); err != nil {
			return err
		}
	}
	if _, err := c.metaLeader(time.Minute); err != nil {
		return err
	}
	nc, err := nats.Connect(c.urls(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	if err := until(time.Minute, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := js.AccountInfo(ctx)
		return err
	}); err != nil {
		return fmt.Errorf("JetStream not ready: %w", err)
	}
	base, err := samples(c)
	if err != nil {
		return err
	}

	progress(c, "creating %d R3 streams, each with a durable", n)
	var streamTimes []float64
	var consumerTotal time.Duration
	t0 := time.Now()
	for i := 0; i < n; i++ {
		// A placement refused because a server seems offline (nats-server
		// once answered 10005 "peer offline" midway through the creates,
		// with all three servers running) is retried, as a client would,
		// the time spent counted in the create; the retries are counted.
		var st jetstream.Stream
		var err error
		ts := time.Now()
		for end := ts.Add(30 * time.Second); ; {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			st, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: fmt.Sprintf("S%d", i),
				Subjects: []string{fmt.Sprintf("s.%d.>", i)}, Replicas: 3, Storage: jetstream.FileStorage})
			cancel()
			if err == nil || !strings.Contains(err.Error(), "peer offline") || time.Now().After(end) {
				break
			}
			r["stream_create_retries"]++
			time.Sleep(50 * time.Millisecond)
		}
		if err != nil {
			return fmt.Errorf("create stream S%d: %w", i, err)
		}
		streamTimes = append(streamTimes, float64(time.Since(ts))/1e6)
		// A request nobody answers (no server serving the new stream yet)
		// is retried after 2 s, as a client would; the retries are counted.
		tc := time.Now()
		err = until(30*time.Second, func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "D", AckPolicy: jetstream.AckExplicitPolicy})
			if err != nil {
				r["consumer_create_retries"]++
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("create durable of S%d: %w", i, err)
		}
		consumerTotal += time.Since(tc)
	}
	r["create_total"] = time.Since(t0).Seconds()
	slices.Sort(streamTimes)
	var sum float64
	for _, v := range streamTimes {
		sum += v
	}
	r["stream_create_mean"] = sum / float64(n)
	r["stream_create_p50"] = streamTimes[n/2]
	r["stream_create_p99"] = streamTimes[min(n-1, n*99/100)]
	r["consumer_create_mean"] = float64(consumerTotal) / 1e6 / float64(n)
	progress(c, "created in %.1f s; waiting for every replica to be current", r["create_total"])

	if _, err := waitHealthy(js, n, "", 2*time.Minute); err != nil {
		return err
	}
	time.Sleep(5 * time.Second)
	s0, err := samples(c)
	if err != nil {
		return err
	}
	const idleFor = 10 * time.Second
	if profileDir != "" {
		// The idle CPU profile of every server (go tool pprof -top FILE).
		for _, nd := range c.nodes {
			go nd.saveProfile(fmt.Sprintf("profile?seconds=%d", int(idleFor.Seconds())-1),
				filepath.Join(profileDir, fmt.Sprintf("%s-%d-idle-cpu.pb.gz", nd.name, n)))
		}
	}
	time.Sleep(idleFor)
	if profileDir != "" {
		for _, nd := range c.nodes {
			nd.saveProfile("heap", filepath.Join(profileDir, fmt.Sprintf("%s-%d-heap.pb.gz", nd.name, n)))
		}
	}
	s1, err := samples(c)
	if err != nil {
		return err
	}
	var cpu, rss, fds, gor float64
	for i := range c.nodes {
		cpu += float64(s1[i].cpu-s0[i].cpu) / float64(idleFor) * 100
		rss += s1[i].rss.MiB()
		fds += float64(s1[i].fds)
		gor += float64(s1[i].goroutines)
		r["rss_per_stream_per_server"] += (s1[i].rss.MiB() - base[i].rss.MiB()) * 1024 / float64(n) / 3
	}
	r["idle_cpu_per_server"], r["rss_per_server"] = cpu/3, rss/3
	r["fds_per_server"], r["goroutines_per_server"] = fds/3, gor/3
	progress(c, "idle: cpu %.2f%%, rss %.0f MiB, fds %.0f, goroutines %.0f per server",
		cpu/3, rss/3, fds/3, gor/3)

	// Restart one server that is not the meta leader.
	ml, err := c.metaLeader(time.Minute)
	if err != nil {
		return err
	}
	victim := c.nodes[0]
	if victim == ml {
		victim = c.nodes[1]
	}
	progress(c, "restarting %s", victim.name)
	victim.stop(syscall.SIGTERM)
	t0 = time.Now()
	if err := victim.start(); err != nil {
		return err
	}
	if _, err := waitHealthy(js, n, "", 5*time.Minute); err != nil {
		return fmt.Errorf("after restarting %s: %w", victim.name, err)
	}
	r["restart_one_until_current"] = time.Since(t0).Seconds()
	progress(c, "all current %.2f s after restarting %s", r["restart_one_until_current"], victim.name)

	// SIGKILL the meta leader: how long until every group leads again.
	ml, err = c.metaLeader(time.Minute)
	if err != nil {
		return err
	}
	progress(c, "killing the meta leader %s", ml.name)
	ml.stop(syscall.SIGKILL)
	t0 = time.Now()
	if _, err := waitHealthy(js, n, ml.name, 5*time.Minute); err != nil {
		return fmt.Errorf("after killing the meta leader %s: %w", ml.name, err)
	}
	r["meta_leader_kill_until_all_leaders"] = time.Since(t0).Seconds()
	progress(c, "every stream and durable led %.2f s after killing %s", r["meta_leader_kill_until_all_leaders"], ml.name)
	return nil
}

// samples reads every node's resources.
func samples(c *cluster) ([]sample, error) {
	var out []sample
	for _, nd := range c.nodes {
		s, err := nd.sample()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", nd.name, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// waitHealthy polls until every stream S0..S(n-1) has a leader and its
// durable too; with dead == "", every replica must also be current and
// online, else the leaders must not be dead (a killed server). It returns
// the time it took.
func waitHealthy(js jetstream.JetStream, n int, dead string, within time.Duration) (time.Duration, error) {
	t0 := time.Now()
	pending := make([]int, n)
	for i := range pending {
		pending[i] = i
	}
	var lastErr error
	lastSaid := time.Now()
	for len(pending) > 0 {
		if time.Since(lastSaid) > 15*time.Second {
			fmt.Fprintf(os.Stderr, "%s             %d streams not healthy yet, e.g. S%d: %v\n", time.Now().Format("15:04:05"), len(pending), pending[0], lastErr)
			lastSaid = time.Now()
		}
		if time.Since(t0) > within {
			return 0, fmt.Errorf("%d streams not healthy after %s, e.g. S%d: %v", len(pending), within, pending[0], lastErr)
		}
		type answer struct {
			i   int
			err error
		}
		jobs := make(chan int)
		answers := make(chan answer)
		for w := 0; w < 8; w++ {
			go func() {
				for i := range jobs {
					answers <- answer{i, healthy(js, i, dead)}
				}
			}()
		}
		go func() {
			for _, i := range pending {
				jobs <- i
			}
			close(jobs)
		}()
		var still []int
		for range pending {
			a := <-answers
			if a.err != nil {
				still = append(still, a.i)
				lastErr = a.err
			}
		}
		slices.Sort(still)
		pending = still
		if len(pending) > 0 {
			time.Sleep(50 * time.Millisecond)
		}
	}
	return time.Since(t0), nil
}

func healthy(js jetstream.JetStream, i int, dead string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, fmt.Sprintf("S%d", i))
	if err != nil {
		return err
	}
	ci := st.CachedInfo().Cluster
	if ci == nil || ci.Leader == "" || ci.Leader == dead {
		return fmt.Errorf("no stream leader")
	}
	if dead == "" {
		if len(ci.Replicas) != 2 {
			return fmt.Errorf("%d replicas besides the leader", len(ci.Replicas))
		}
		for _, p := range ci.Replicas {
			if !p.Current || p.Offline {
				return fmt.Errorf("replica %s not current", p.Name)
			}
		}
	}
	c, err := st.Consumer(ctx, "D")
	if err != nil {
		return err
	}
	if cc := c.CachedInfo().Cluster; cc == nil || cc.Leader == "" || cc.Leader == dead {
		return fmt.Errorf("no durable leader")
	}
	return nil
}

// until retries f every 50 ms until it succeeds or within passes.
func until(within time.Duration, f func() error) error {
	end := time.Now().Add(within)
	for {
		err := f()
		if err == nil || time.Now().After(end) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func ratio(res map[string]result, key string) string {
	a, okA := res["jetwal"][key]
	b, okB := res["nats-server"][key]
	if !okA || !okB || b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", a/b)
}

func cell(res map[string]result, kind, key string) string {
	v, ok := res[kind][key]
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.2f", v)
}

func render(res map[string]result, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d R3 streams with one durable each, 3 servers (jetwal/nats-server ratio: lower is better)\n", n)
	fmt.Fprintf(&b, "%-36s %-7s %12s %12s %7s\n", "metric", "unit", "jetwal", "nats-server", "ratio")
	for _, m := range metrics {
		fmt.Fprintf(&b, "%-36s %-7s %12s %12s %7s\n", m.key, m.unit, cell(res, "jetwal", m.key), cell(res, "nats-server", m.key), ratio(res, m.key))
	}
	return b.String()
}

func csvOf(res map[string]result, n int) string {
	var b strings.Builder
	b.WriteString("streams,metric,unit,jetwal,nats_server,ratio\n")
	for _, m := range metrics {
		fmt.Fprintf(&b, "%d,%s,%s,%s,%s,%s\n", n, m.key, m.unit, cell(res, "jetwal", m.key), cell(res, "nats-server", m.key), ratio(res, m.key))
	}
	return b.String()
}
