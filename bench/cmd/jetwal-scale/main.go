// Command jetwal-scale starts jetwal and nats-server in turn on fresh store
// directories and measures what grows with a deployment's size rather than
// its message rate: many streams, many durable consumers, a consumer
// filtered on one of two interleaved subjects. Each scenario prints one
// line per server and figure. It is what the scale fixes of issue 16's
// round were measured with; `make bench-scale` runs it.
//
//	jetwal-scale -jetwal .bin/jetwal -nats-server .bin/nats-server \
//	    [-scenarios streams,consumers,filtered] [-streams 2000] \
//	    [-consumers 2000] [-filtered 1000000]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// server is one of the two servers under test, running on a store of its
// own.
type server struct {
	name, bin string
	dir, url  string
	port      int
	cmd       *exec.Cmd
}

func (s *server) start() error {
	// Something already on the port (a server a killed run left behind)
	// would answer in this one's place.
	if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", s.port), time.Second); err == nil {
		c.Close()
		return fmt.Errorf("port %d is in use: stop what listens there or pass -port", s.port)
	}
	args := []string{"-js", "-sd", s.dir, "-a", "127.0.0.1", "-p", strconv.Itoa(s.port)}
	if s.name == "jetwal" {
		args = append([]string{"serve"}, args...)
	}
	s.cmd = exec.Command(s.bin, args...)
	if err := s.cmd.Start(); err != nil {
		return err
	}
	s.url = fmt.Sprintf("nats://127.0.0.1:%d", s.port)
	return nil
}

// stop sends SIGTERM and returns how long the server took to exit.
func (s *server) stop() time.Duration {
	t0 := time.Now()
	s.cmd.Process.Signal(syscall.SIGTERM)
	s.cmd.Wait()
	return time.Since(t0)
}

func (s *server) connect() (*nats.Conn, jetstream.JetStream, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		nc, err := nats.Connect(s.url, nats.Timeout(time.Second))
		if err == nil {
			js, err := jetstream.New(nc)
			return nc, js, err
		}
		if time.Now().After(deadline) {
			return nil, nil, fmt.Errorf("%s: connect: %w", s.name, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// procStat returns the process's CPU seconds (user and system), resident
// set and open descriptors, from /proc.
func procStat(pid int) (cpu float64, rssKiB, fds int, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, 0, err
	}
	if cpu, err = cpuSeconds(string(b)); err != nil {
		return 0, 0, 0, err
	}
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, 0, err
	}
	rssKiB = statusKiB(string(st), "VmRSS:")
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return cpu, rssKiB, len(ents), err
}

// cpuSeconds reads utime+stime (clock ticks of 1/100 s) from a
// /proc/PID/stat line. The command name, in parentheses, may hold spaces:
// fields are counted after its closing parenthesis.
func cpuSeconds(stat string) (float64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("stat: no command name")
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("stat: %d fields after the command name", len(f))
	}
	u, err1 := strconv.ParseFloat(f[11], 64)
	s, err2 := strconv.ParseFloat(f[12], 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("stat: %w", err)
	}
	return (u + s) / 100, nil
}

// statusKiB reads a "Key:  123 kB" line of /proc/PID/status; 0 if absent.
func statusKiB(status, key string) int {
	for _, l := range strings.Split(status, "\n") {
		if rest, ok := strings.CutPrefix(l, key); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				n, _ := strconv.Atoi(f[0])
				return n
			}
		}
	}
	return 0
}

func main() {
	jetwalBin := flag.String("jetwal", ".bin/jetwal", "jetwal binary")
	natsBin := flag.String("nats-server", ".bin/nats-server", "nats-server binary")
	scenarios := flag.String("scenarios", "streams,consumers,filtered", "scenarios to run, comma-separated")
	nStreams := flag.Int("streams", 2000, "streams in the streams scenario")
	nConsumers := flag.Int("consumers", 2000, "durable consumers in the consumers scenario")
	nFiltered := flag.Int("filtered", 1000000, "messages in the filtered scenario")
	port := flag.Int("port", 14350, "client port for the servers (one at a time)")
	flag.Parse()
	run := map[string]func(*server) error{
		"streams":   func(s *server) error { return streams(s, *nStreams) },
		"consumers": func(s *server) error { return consumers(s, *nConsumers) },
		"filtered":  func(s *server) error { return filtered(s, *nFiltered) },
	}
	failed := false
	for _, sc := range strings.Split(*scenarios, ",") {
		f, ok := run[sc]
		if !ok {
			fmt.Fprintf(os.Stderr, "jetwal-scale: unknown scenario %q\n", sc)
			os.Exit(2)
		}
		for _, s := range []*server{{name: "jetwal", bin: *jetwalBin, port: *port}, {name: "nats-server", bin: *natsBin, port: *port}} {
			dir, err := os.MkdirTemp("", "jetwal-scale-")
			if err != nil {
				fmt.Fprintln(os.Stderr, "jetwal-scale:", err)
				os.Exit(1)
			}
			s.dir = dir
			err = f(s)
			if s.cmd != nil && s.cmd.ProcessState == nil {
				s.stop() // a scenario that failed midway left it running
			}
			os.RemoveAll(dir)
			if err != nil {
				// One server refusing a step (nats-server caps the
				// consumers of a stream, say) is a result, not the end.
				// Only jetwal's failures fail the run: the peer's
				// refusals are figures of the comparison.
				failed = failed || s.name == "jetwal"
				report(s, sc, "FAILED", err)
			}
		}
	}
	if failed {
		os.Exit(1)
	}
}

func report(s *server, scenario, what string, v any) {
	fmt.Printf("%-9s %-11s %-40s %v\n", scenario, s.name, what, v)
}

// streams creates n streams, publishes twice to each, and reports the
// server's resources idle, its stop and its restart.
func streams(s *server, n int) error {
	if err := s.start(); err != nil {
		return err
	}
	nc, js, err := s.connect()
	if err != nil {
		return err
	}
	ctx := context.Background()
	t0 := time.Now()
	for i := 0; i < n; i++ {
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: fmt.Sprintf("S%d", i), Subjects: []string{fmt.Sprintf("s.%d.>", i)}}); err != nil {
			return err
		}
	}
	report(s, "streams", fmt.Sprintf("create %d streams", n), time.Since(t0).Round(time.Millisecond))
	for i := 0; i < n; i++ {
		if _, err := js.Publish(ctx, fmt.Sprintf("s.%d.x", i), []byte("hello")); err != nil {
			return err
		}
		if _, err := js.PublishAsync(fmt.Sprintf("s.%d.y", i), []byte("hello")); err != nil {
			return err
		}
	}
	<-js.PublishAsyncComplete()
	if err := idle(s, "streams", 45*time.Second); err != nil {
		return err
	}
	nc.Close()
	report(s, "streams", "stop (SIGTERM to exit)", s.stop().Round(time.Millisecond))
	return restart(s, "streams", func(js jetstream.JetStream) error {
		_, err := js.Stream(ctx, fmt.Sprintf("S%d", n-1))
		return err
	})
}

// consumers creates n durables on one stream, fetches and acks one
// message with each, and reports the server's resources and restart.
func consumers(s *server, n int) error {
	ctx := context.Background()
	nc, st, err := startStream(s, "C", 1000, func(i int) string { return fmt.Sprintf("c.%d", i) }, []byte("x"))
	if err != nil {
		return err
	}
	t0 := time.Now()
	for i := 0; i < n; i++ {
		if _, err := st.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: fmt.Sprintf("d%d", i),
			AckPolicy: jetstream.AckExplicitPolicy, FilterSubject: fmt.Sprintf("c.%d", i%1000)}); err != nil {
			return err
		}
	}
	report(s, "consumers", fmt.Sprintf("create %d durables", n), time.Since(t0).Round(time.Millisecond))
	for i := 0; i < n; i++ {
		c, err := st.Consumer(ctx, fmt.Sprintf("d%d", i))
		if err != nil {
			return err
		}
		b, err := c.Fetch(1, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			return err
		}
		for m := range b.Messages() {
			m.DoubleAck(ctx)
		}
	}
	if err := idle(s, "consumers", 5*time.Second); err != nil {
		return err
	}
	nc.Close()
	report(s, "consumers", "stop (SIGTERM to exit)", s.stop().Round(time.Millisecond))
	return restart(s, "consumers", func(js jetstream.JetStream) error {
		st, err := js.Stream(ctx, "C")
		if err == nil {
			_, err = st.Consumer(ctx, fmt.Sprintf("d%d", n-1))
		}
		return err
	})
}

// startStream starts s, creates stream name over "<lowercase name>.>" and
// publishes n messages of payload to subj(i), waiting for every ack.
func startStream(s *server, name string, n int, subj func(i int) string, payload []byte) (*nats.Conn, jetstream.Stream, error) {
	if err := s.start(); err != nil {
		return nil, nil, err
	}
	nc, js, err := s.connect()
	if err != nil {
		return nil, nil, err
	}
	st, err := js.CreateStream(context.Background(), jetstream.StreamConfig{Name: name, Subjects: []string{strings.ToLower(name) + ".>"}})
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	for i := 0; i < n; i++ {
		if _, err := js.PublishAsync(subj(i), payload); err != nil {
			nc.Close()
			return nil, nil, err
		}
		if i%10000 == 9999 {
			<-js.PublishAsyncComplete()
		}
	}
	<-js.PublishAsyncComplete()
	return nc, st, nil
}

// filtered stores n messages alternating f.0 and f.1 and fetches the f.1
// half through a durable filtered on it, 1000 at a time, without acks.
func filtered(s *server, n int) error {
	ctx := context.Background()
	nc, st, err := startStream(s, "F", n, func(i int) string { return fmt.Sprintf("f.%d", i%2) }, make([]byte, 64))
	if err != nil {
		return err
	}
	defer func() { nc.Close(); s.stop() }()
	c, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "D", FilterSubject: "f.1", AckPolicy: jetstream.AckNonePolicy})
	if err != nil {
		return err
	}
	t0 := time.Now()
	for got := 0; got < n/2; {
		b, err := c.Fetch(1000, jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			return err
		}
		for range b.Messages() {
			got++
		}
	}
	el := time.Since(t0)
	report(s, "filtered", fmt.Sprintf("fetch %d of %d messages (msgs/s)", n/2, n), int(float64(n/2)/el.Seconds()))
	return nil
}

// idle waits settle, then reports the server's CPU over 5 s, its resident
// set and its open descriptors.
func idle(s *server, scenario string, settle time.Duration) error {
	time.Sleep(settle)
	pid := s.cmd.Process.Pid
	c0, _, _, err := procStat(pid)
	if err != nil {
		return err
	}
	time.Sleep(5 * time.Second)
	c1, rss, fds, err := procStat(pid)
	if err != nil {
		return err
	}
	report(s, scenario, "idle CPU (% of a core)", fmt.Sprintf("%.2f", (c1-c0)/5*100))
	report(s, scenario, "resident set (MiB)", rss>>10)
	report(s, scenario, "open descriptors", fds)
	return nil
}

// restart starts the server again on its store and reports the time until
// ready answers, and its open descriptors then.
func restart(s *server, scenario string, ready func(jetstream.JetStream) error) error {
	t0 := time.Now()
	if err := s.start(); err != nil {
		return err
	}
	defer s.stop()
	nc, js, err := s.connect()
	if err != nil {
		return err
	}
	defer nc.Close()
	for err = ready(js); err != nil; err = ready(js) {
		if time.Since(t0) > time.Minute {
			return fmt.Errorf("not ready a minute after restart: %w", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	report(s, scenario, "restart until ready", time.Since(t0).Round(time.Millisecond))
	_, _, fds, err := procStat(s.cmd.Process.Pid)
	if err != nil {
		return err
	}
	report(s, scenario, "open descriptors after restart", fds)
	return nil
}
