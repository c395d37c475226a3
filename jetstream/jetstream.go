package jetstream

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/apiserver"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/vfs"
	"github.com/jetwal/jetwal/wal"
)

// Config configures a JetStream. The zero value means the defaults.
type Config struct {
	// StoreDir is the root of the store; file streams live under
	// StoreDir/jetstream/<Account>/streams. "" means $TMPDIR/jetwal.
	StoreDir string
	// Account names the account whose streams this JetStream serves: its
	// directory in the store. "" means GlobalAccount ($G), the account of
	// every client while the server has no accounts.
	Account string
	// Sync is the durability policy of file streams: a PubAck is sent once
	// the message is durable under it. The zero value is wal.SyncAlways.
	Sync wal.SyncMode
	// SyncInterval is the flush period for wal.SyncInterval ("" = wal's default).
	SyncInterval time.Duration
	// FS is the filesystem of the store; nil means vfs.Default.
	FS vfs.FS
	// MaxMemory and MaxStore bound the bytes all memory (file) streams may
	// hold together; 0 or negative means unlimited.
	MaxMemory, MaxStore int64
	// AccountMaxMemory and AccountMaxStore are the account's own limits
	// (accounts { A: { jetstream: { max_mem, max_file } } }): reserved
	// max_bytes and bytes stored count against them (account_limits.go);
	// 0 or negative means unlimited. MaxStreams and MaxConsumers bound the
	// account's streams and its consumers (of all streams together).
	AccountMaxMemory, AccountMaxStore int64
	MaxStreams, MaxConsumers          int
	// AccountMaxAckPending is the account's max_ack_pending: as
	// nats-server's, a consumer asking for more is refused with 10121 and
	// it is the default of a consumer with acks that names none when lower
	// than 1000 (validate.ConsumerDefaults); 0 or negative means unlimited.
	AccountMaxAckPending int
	// StoreLock, when set, is the store directory's lock, taken once by
	// LockStore and shared by the JetStreams of several accounts in one
	// store; nil = New takes the lock itself.
	StoreLock *StoreLock
	// Domain is the JetStream domain (jetstream { domain }): the API is
	// served under $JS.<Domain>.API.> as well, and PubAcks and account
	// info name it. "" means none.
	Domain string
	// UniqueTag is the unique tag prefix of stream placement (jetstream {
	// unique_tag }, lower case): the servers of a replicated stream each
	// have a tag of this prefix, each a different one
	// (cluster_placement.go). "" = no such rule. Only the meta leader's
	// matters, so every server of a cluster should have the same.
	UniqueTag string
	// Logger receives startup reports and errors; nil discards them.
	Logger *slog.Logger
	// Cluster, when set, makes this JetStream one server of clustered
	// JetStream (cluster.go); nil means a single server.
	Cluster Cluster
	// Encryption is the configured key (nats-server's `jetstream { key,
	// cipher, prev_key }`): file streams created with a key store every
	// file in their directory encrypted and authenticated (doc.go,
	// "Encryption at rest"). The zero value stores in the clear. A stream
	// whose key file the key does not open is not loaded (LoadErrors) and
	// left as it is.
	Encryption crypt.Config

	waits waits // fixed timeouts; tests shorten them (waits.go)
	// staged bounds the bytes of uncommitted atomic batches; tests lower
	// it (waits.go).
	staged stagedBounds
}

// Validate reports a configuration that cannot work.
func (c Config) Validate() error {
	if c.Sync < wal.SyncAlways || c.Sync > wal.SyncNever {
		return fmt.Errorf("jetstream: config: invalid sync mode %d", c.Sync)
	}
	if c.SyncInterval < 0 {
		return fmt.Errorf("jetstream: config: negative sync interval %v", c.SyncInterval)
	}
	if c.Domain != "" && !ValidDomain(c.Domain) {
		return fmt.Errorf("jetstream: config: invalid domain %q: want one subject token of letters, digits, '-' or '_'", c.Domain)
	}
	if err := c.Encryption.Validate(); err != nil {
		return fmt.Errorf("jetstream: config: %w", err)
	}
	if c.Account != "" && (strings.ContainsAny(c.Account, "/\\\x00") || c.Account == "." || c.Account == "..") {
		return fmt.Errorf("jetstream: config: account %q cannot name a directory", c.Account)
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.StoreDir == "" {
		c.StoreDir = filepath.Join(os.TempDir(), "jetwal")
	}
	if c.FS == nil {
		c.FS = vfs.Default
	}
	if c.Account == "" {
		c.Account = GlobalAccount
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	c.waits = c.waits.withDefaults()
	c.staged = c.staged.withDefaults()
	return c
}

// apiQueueLimit is how many API requests may wait for a worker; more are
// dropped unanswered (the client times out), as nats-server does.
const apiQueueLimit = 10_000

// JetStream serves the JetStream API of one server and owns its streams.
type JetStream struct {
	env // the host, settings and logger streams and consumers share

	api  *apiserver.Server // the API handlers and their routing table
	mgmt *workQueue        // management API requests
	gets *workQueue        // MSG.GET and DIRECT.GET
	work *workQueue        // follow-up work of the publish path (rollups)
	cons *consumerManager
	cl   *clustering // nil without Config.Cluster

	apiTotal, apiErrors atomic.Uint64
	usage               accountUsage // bytes stored, against the account limits (account_limits.go)
	walMetrics          wal.Metrics  // counted by every file stream (engine_stats.go)

	stopSweep chan struct{} // closed by Close; ends sweepLoop
	sweepDone chan struct{}

	mu      sync.RWMutex // guards the fields below
	streams map[string]*stream
	apiSub  *server.Subscription
	// domainSub serves $JS.<domain>.API.> (domain.go); nil without a domain.
	domainSub *server.Subscription
	loadErrs  []error
	closed    bool
	lock      io.Closer // the store directory's lock (storelock.go)

	loading   bool           // New is loading the streams (only New's goroutine)
	verifying sync.WaitGroup // background verification of loaded streams
	verified  chan struct{}  // closed when verifying is done (Verified)
}

// New starts JetStream on srv (a server's $G, or one of its accounts): it
// loads the streams under cfg.StoreDir (a
// stream whose metadata is damaged is reported, see LoadErrors, and skipped;
// the others load), subscribes $JS.API.> and the subjects of every stream,
// and registers Close to run at server shutdown.
func New(srv Host, cfg Config) (*JetStream, error) {
	if srv == nil {
		return nil, errors.New("jetstream: nil server")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	js := &JetStream{
		env:     env{srv: srv, cfg: cfg, log: cfg.Logger},
		streams: make(map[string]*stream),
	}
	lock, err := cfg.StoreLock.share(cfg.FS, cfg.StoreDir)
	if err != nil {
		return nil, err
	}
	js.lock = lock
	root := streamsDir(cfg.StoreDir, cfg.Account)
	if err := vfs.MkdirAllSync(cfg.FS, root, dirPerm); err != nil {
		lock.Close()
		return nil, fmt.Errorf("jetstream: create store directory %s: %w", root, err)
	}
	js.mgmt, js.gets, js.work = newWorkQueue(apiQueueLimit), newWorkQueue(apiQueueLimit), newWorkQueue(0)
	js.api = apiserver.New(js, apiserver.Config{StoreDir: cfg.StoreDir, Logger: cfg.Logger, Clustered: cfg.Cluster != nil})
	js.registerAPI()
	if cfg.Cluster != nil {
		js.cl = &clustering{c: cfg.Cluster, hosted: make(map[string]*hosted), leaving: make(map[string]*hosted),
			converting: make(map[string]*conversion)}
	}
	if err := js.startConsumers(); err != nil {
		js.Close()
		return nil, err
	}
	js.verified = make(chan struct{})
	js.loading = true
	err = js.loadStreams(root)
	js.loading = false
	if err != nil {
		js.Close()
		return nil, err
	}
	go func() {
		js.verifying.Wait()
		close(js.verified)
		// Loading read checkpoints and dedupe files into buffers that are
		// garbage now; give that memory back to the system once, so that
		// the resident size after a restart is the live indexes.
		debug.FreeOSMemory()
	}()
	js.measureUsage(js.streamList())
	js.stopSweep, js.sweepDone = make(chan struct{}), make(chan struct{})
	go js.sweepLoop()
	sub, err := srv.Subscribe(api.Wildcard, "", js.handleAPI)
	if err != nil {
		js.Close()
		return nil, fmt.Errorf("jetstream: subscribe %s: %w", api.Wildcard, err)
	}
	js.mu.Lock()
	js.apiSub = sub
	js.mu.Unlock()
	if err := js.subscribeDomain(); err != nil {
		js.Close()
		return nil, err
	}
	if js.clustered() {
		if err := js.startCluster(); err != nil {
			js.Close()
			return nil, fmt.Errorf("jetstream: cluster: %w", err)
		}
	}
	srv.OnShutdown(func() { js.Close() })
	js.log.Info("JetStream started", "store_dir", filepath.Join(cfg.StoreDir, "jetstream"),
		"sync", cfg.Sync.String(), "streams", len(js.StreamNames()))
	return js, nil
}

// LoadErrors returns the problems found while loading streams at start, one
// per stream that did not load; each names the file at fault.
func (js *JetStream) LoadErrors() []error {
	js.mu.RLock()
	defer js.mu.RUnlock()
	return append([]error(nil), js.loadErrs...)
}

// StreamNames returns the names of the loaded streams, sorted.
func (js *JetStream) StreamNames() []string {
	js.mu.RLock()
	defer js.mu.RUnlock()
	names := make([]string, 0, len(js.streams))
	for n := range js.streams {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// streamList returns the streams, copied under mu so that the caller can
// lock each one without holding mu (never two locks at once).
func (js *JetStream) streamList() []*stream {
	js.mu.RLock()
	defer js.mu.RUnlock()
	streams := make([]*stream, 0, len(js.streams))
	for _, s := range js.streams {
		streams = append(streams, s)
	}
	return streams
}

func (js *JetStream) lookup(name string) *stream {
	js.mu.RLock()
	defer js.mu.RUnlock()
	return js.streams[name]
}

// Close stops serving the API and closes every stream's store. It is safe
// to call more than once.
func (js *JetStream) Close() error {
	js.mu.Lock()
	if js.closed {
		js.mu.Unlock()
		return nil
	}
	js.closed = true
	sub, dsub := js.apiSub, js.domainSub
	js.apiSub, js.domainSub = nil, nil
	js.mu.Unlock()
	for _, s := range []*server.Subscription{sub, dsub} {
		if s != nil {
			s.Unsubscribe()
		}
	}
	if js.stopSweep != nil {
		close(js.stopSweep)
		<-js.sweepDone
	}
	if js.cons != nil {
		js.cons.stop()
	}
	for _, q := range []*workQueue{js.mgmt, js.gets} {
		if q != nil {
			q.close()
		}
	}
	if js.cl != nil {
		js.closeCluster()
	}
	js.mu.Lock()
	streams := make([]*stream, 0, len(js.streams))
	for _, s := range js.streams {
		streams = append(streams, s)
	}
	js.mu.Unlock()
	first := closeStreams(streams)
	if js.work != nil {
		js.work.close()
	}
	js.verifying.Wait() // stops early: the stores are closed
	if js.lock != nil {
		js.lock.Close() // last: the store is ours until every file is closed
	}
	return first
}

// closeParallel is how many streams Close closes at once. Each close
// writes and fsyncs a checkpoint and the stream's sidecar files, a few
// milliseconds of waiting on the disk: one at a time, a server of 2000
// freshly written streams took 3.3 s to stop on the 2-core VM; 8 at a
// time, 1.5-1.7 s (32 at a time was no faster).
const closeParallel = 8

// loadParallel is how many stream stores a start opens at once: reading
// checkpoints and recovering segments, mostly waiting on the disk.
const loadParallel = 8

// closeStreams closes every stream, closeParallel at a time, and returns
// the first error.
func closeStreams(streams []*stream) error {
	errs := make([]error, len(streams))
	forEachParallel(len(streams), closeParallel, func(i int) { errs[i] = streams[i].close() })
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// forEachParallel calls fn(i) for every i in [0, n), at most par at once,
// and returns when all have returned.
func forEachParallel(n, par int, fn func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(par, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// sweepInterval is how often expired Nats-Msg-Id entries are dropped from
// streams that see no new ids (publishes with ids expire entries as well).
const sweepInterval = time.Second

func (js *JetStream) sweepLoop() {
	defer close(js.sweepDone)
	t := time.NewTicker(sweepInterval)
	defer t.Stop()
	for {
		select {
		case <-js.stopSweep:
			return
		case now := <-t.C:
			streams := js.streamList()
			for _, s := range streams {
				s.pmu.Lock()
				s.dedup.Expire(now.UnixNano())
				s.pmu.Unlock()
				s.saveDedupeIfDue(now)
				s.saveTTLsIfDue(now) // expiry itself is timed: ttl.go

			}
			js.measureUsage(streams)
		}
	}
}
