package serve

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"

	"github.com/jetwal/jetwal/jetstream"
	"github.com/jetwal/jetwal/server"
)

// startJetStreams starts JetStream for every account that has it: $G alone
// without accounts (or in a cluster whose accounts all lack jetstream, as
// before accounts could have it there), else each account whose jetstream
// is on, in a cluster each in its own namespace of the cluster (cl, $G's;
// cluster_accounts.go). The other accounts answer the JetStream API with
// nats-server's "JetStream not enabled for account". The first JetStream
// returned is the one the monitor reports.
func startJetStreams(srv *server.Server, o *Options, cl *jsCluster, log *slog.Logger) ([]*jetstream.JetStream, error) {
	root := storeRoot(o.Store.Dir)
	if o.Store.Dir == DefaultStoreDir() {
		if err := claimDefaultStore(root); err != nil {
			return nil, err
		}
	}
	base := jetstream.Config{StoreDir: root, Logger: log, MaxMemory: o.Store.MaxMemory, MaxStore: o.Store.MaxStore,
		Sync: o.Store.Sync.Mode, SyncInterval: o.Store.Sync.Interval, Domain: o.Store.Domain,
		UniqueTag: o.Store.UniqueTag, Encryption: o.Store.Encryption}
	if o.Accounts == nil || cl != nil && !anyAccountJetStream(o) {
		jcfg := base
		if cl != nil {
			jcfg.Cluster = cl
		}
		js, err := jetstream.New(srv, jcfg)
		if err != nil {
			return nil, fmt.Errorf("jetstream: %w", err)
		}
		srv.SetStreamTracer(js.TraceStream) // message traces name the capturing stream
		if err := serveDisabled(srv, map[string]bool{server.GlobalAccount: true}, clusterSystem(cl, o)); err != nil {
			_ = js.Close()
			return nil, err
		}
		return []*jetstream.JetStream{js}, nil
	}
	lock, err := jetstream.LockStore(nil, root)
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	defer lock.Close() // the JetStreams hold their own references
	var out []*jetstream.JetStream
	fail := func(err error) ([]*jetstream.JetStream, error) {
		for _, js := range out {
			_ = js.Close()
		}
		return nil, err
	}
	enabled := make(map[string]bool)
	for _, a := range o.Accounts {
		if a.JetStream == nil {
			continue
		}
		enabled[a.Name] = true
		l := a.JetStream
		jcfg := base
		jcfg.Account, jcfg.Logger, jcfg.StoreLock = a.Name, log.With("account", a.Name), lock
		jcfg.AccountMaxMemory, jcfg.AccountMaxStore = l.MaxMemory, l.MaxStore
		jcfg.MaxStreams, jcfg.MaxConsumers = l.MaxStreams, l.MaxConsumers
		jcfg.AccountMaxAckPending = l.MaxAckPending
		if cl != nil {
			c := *cl
			c.account = a.Name
			jcfg.Cluster = c
		}
		acc := srv.Account(a.Name)
		js, err := jetstream.New(acc, jcfg)
		if err != nil {
			return fail(fmt.Errorf("jetstream of account %s: %w", a.Name, err))
		}
		acc.SetStreamTracer(js.TraceStream) // message traces name the capturing stream
		out = append(out, js)
	}
	if err := serveDisabled(srv, enabled, clusterSystem(cl, o)); err != nil {
		return fail(err)
	}
	return out, nil
}

// anyAccountJetStream reports whether an account of o has jetstream.
func anyAccountJetStream(o *Options) bool {
	for _, a := range o.Accounts {
		if a.JetStream != nil {
			return true
		}
	}
	return false
}

// serveDisabled answers the JetStream API with 10039 in every account not
// in enabled. In system, the system account of a cluster, it leaves
// $JS.API.META.LEADER.STEPDOWN and $JS.API.SERVER.REMOVE to the meta
// leader, which answers them there (jetstream/cluster_stepdown.go,
// cluster_server_remove.go), as nats-server does.
func serveDisabled(srv *server.Server, enabled map[string]bool, system string) error {
	for _, name := range srv.AccountNames() {
		if enabled[name] {
			continue
		}
		var h jetstream.Host = srv.Account(name)
		if name == system {
			skip := map[string]bool{}
			for _, subj := range jetstream.SystemSubjects() {
				skip[subj] = true
			}
			h = skipSubjects{Host: h, skip: skip}
		}
		sub, err := jetstream.ServeDisabled(h)
		if err != nil {
			return err
		}
		srv.OnShutdown(sub.Unsubscribe)
	}
	return nil
}

// storeRoot is the store root of a store directory, as with nats-server:
// streams live in <dir>/jetstream/$G/streams. The default store is already
// the "jetstream" directory of $TMPDIR/jetwal.
func storeRoot(dir string) string {
	if dir == DefaultStoreDir() {
		return filepath.Dir(dir)
	}
	return dir
}

// claimDefaultStore makes the default store root, a predictable name in the
// world-writable temp directory, safe to use: it is created with mode 0700,
// and an existing one is used only if it is a real directory (not a
// symlink) owned by this user. Real data belongs in a directory of its own.
func claimDefaultStore(root string) error {
	if err := os.Mkdir(root, 0o700); err == nil || !errors.Is(err, fs.ErrExist) {
		return err
	}
	fi, err := os.Lstat(root)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir() {
		return fmt.Errorf("default store %s is not a plain directory (a symlink?): refusing to use it; choose a store with -sd", root)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("default store %s belongs to uid %d, not to this user (uid %d): refusing to use it; choose a store with -sd", root, st.Uid, os.Getuid())
	}
	return nil
}

// jetStreams is the monitor's view (monitor.JetStream) of the JetStreams
// of several accounts: their usage added up and the details of each.
type jetStreams []*jetstream.JetStream

// Stats adds up the accounts' usage; the configuration is the first's
// (every account's JetStream shares the store and its settings).
func (jss jetStreams) Stats() jetstream.Stats {
	var st jetstream.Stats
	for i, js := range jss {
		s := js.Stats()
		if i == 0 {
			st = s
			continue
		}
		st.Streams += s.Streams
		st.Consumers += s.Consumers
		st.Messages += s.Messages
		st.Bytes += s.Bytes
		st.Memory += s.Memory
		st.Store += s.Store
		st.APITotal += s.APITotal
		st.APIErrors += s.APIErrors
		st.LoadErrors = append(st.LoadErrors, s.LoadErrors...)
	}
	return st
}

// AccountDetails lists every account's details.
func (jss jetStreams) AccountDetails(o jetstream.DetailOptions) []jetstream.AccountDetail {
	var out []jetstream.AccountDetail
	for _, js := range jss {
		out = append(out, js.AccountDetails(o)...)
	}
	return out
}

// clusterSystem names the system account when JetStream is clustered, ""
// otherwise.
func clusterSystem(cl *jsCluster, o *Options) string {
	if cl == nil {
		return ""
	}
	return o.systemAccount()
}

// skipSubjects is a Host whose subscriptions do not see the subjects in
// skip.
type skipSubjects struct {
	jetstream.Host
	skip map[string]bool
}

func (h skipSubjects) Subscribe(subj, queue string, fn server.Handler) (*server.Subscription, error) {
	return h.Host.Subscribe(subj, queue, func(m *server.Msg) {
		if !h.skip[m.Subject] {
			fn(m)
		}
	})
}
