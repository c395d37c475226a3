package mux

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// sumFSM adds up the bytes of the commands it applies.
type sumFSM struct {
	mu  sync.Mutex
	n   int
	sum int
}

func (f *sumFSM) Apply(l *raft.Log) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	f.sum += int(l.Data[0])
	return f.n
}
func (f *sumFSM) get() (int, int)                     { f.mu.Lock(); defer f.mu.Unlock(); return f.n, f.sum }
func (f *sumFSM) Snapshot() (raft.FSMSnapshot, error) { return nil, fmt.Errorf("no snapshots") }
func (f *sumFSM) Restore(rc io.ReadCloser) error      { return rc.Close() }

// TestGroupsShareOnePort: two raft groups of three servers each, every
// server with one listening port; both groups elect and commit, each on
// its own state. Run with raft's NetworkTransport, with this package's
// Transport, and with both in one group (they speak one protocol).
func TestGroupsShareOnePort(t *testing.T) {
	network := func(int, *Layer) raft.Transport { return nil }
	ours := func(_ int, l *Layer) raft.Transport { return NewTransport(l, 5*time.Second) }
	mixed := func(i int, l *Layer) raft.Transport {
		if i == 0 {
			return nil
		}
		return NewTransport(l, 5*time.Second)
	}
	for name, mk := range map[string]func(int, *Layer) raft.Transport{"network": network, "mux": ours, "mixed": mixed} {
		t.Run(name, func(t *testing.T) { groupsShareOnePort(t, mk) })
	}
}

// groupsShareOnePort runs TestGroupsShareOnePort with server i's
// transport mk(i, layer), raft's NetworkTransport where it returns nil.
func groupsShareOnePort(t *testing.T, mk func(int, *Layer) raft.Transport) {
	groups := []string{"$meta", "S-ORDERS"}
	var muxes []*Mux
	for range 3 {
		_, m := listenMux(t)
		muxes = append(muxes, m)
	}
	type member struct {
		r   *raft.Raft
		fsm *sumFSM
	}
	members := map[string][]member{}
	for _, g := range groups {
		var servers []raft.Server
		for i, m := range muxes {
			servers = append(servers, raft.Server{ID: raft.ServerID(fmt.Sprint("s", i)), Address: raft.ServerAddress(m.addr.String())})
		}
		for i, m := range muxes {
			layer, err := m.Layer(g)
			if err != nil {
				t.Fatal(err)
			}
			trans := mk(i, layer)
			if trans == nil {
				trans = raft.NewNetworkTransport(layer, 3, 5*time.Second, io.Discard)
			}
			c := raft.DefaultConfig()
			c.LocalID = servers[i].ID
			c.HeartbeatTimeout = 300 * time.Millisecond
			c.ElectionTimeout = 300 * time.Millisecond
			c.LeaderLeaseTimeout = 150 * time.Millisecond
			c.LogOutput = io.Discard
			store := raft.NewInmemStore()
			fsm := &sumFSM{}
			r, err := raft.NewRaft(c, fsm, store, store, raft.NewInmemSnapshotStore(), trans)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Shutdown().Error(); trans.(raft.WithClose).Close() })
			members[g] = append(members[g], member{r, fsm})
		}
		if err := members[g][0].r.BootstrapCluster(raft.Configuration{Servers: servers}).Error(); err != nil {
			t.Fatal(err)
		}
	}
	for gi, g := range groups {
		var leader *raft.Raft
		deadline := time.Now().Add(60 * time.Second)
		for leader == nil {
			for _, mb := range members[g] {
				if mb.r.State() == raft.Leader {
					leader = mb.r
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("group %s: no leader", g)
			}
			time.Sleep(10 * time.Millisecond)
		}
		for i := 0; i < 20; i++ {
			if err := leader.Apply([]byte{byte(gi + 1)}, 10*time.Second).Error(); err != nil {
				t.Fatalf("group %s: %v", g, err)
			}
		}
	}
	for gi, g := range groups {
		for i, mb := range members[g] {
			deadline := time.Now().Add(60 * time.Second)
			for {
				n, sum := mb.fsm.get()
				if n == 20 && sum == 20*(gi+1) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("group %s server %d applied %d commands summing %d", g, i, n, sum)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
}

// serveOneGroup starts a Mux on a loopback port, closed at the test's end,
// with one group "G".
func serveOneGroup(t *testing.T) (net.Listener, *Mux, *Layer) {
	t.Helper()
	ln, m := listenMux(t)
	layer, err := m.Layer("G")
	if err != nil {
		t.Fatal(err)
	}
	return ln, m, layer
}

// TestUnknownGroups: connections dispatched for groups the mux does not
// have are closed, and the mux goes on serving a valid one.
func TestUnknownGroups(t *testing.T) {
	ln, m, layer := serveOneGroup(t)
	m.mu.Lock()
	m.park = 50 * time.Millisecond
	m.mu.Unlock()
	for _, pre := range []string{"RAFT \r\n", "RAFT a b\r\n", "RAFT NOPE\r\n", "RAFT " + string(make([]byte, 300)) + "\r\n"} {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte(pre))
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Fatalf("%.20q: connection left open", pre)
		}
		c.Close()
	}
	for _, bad := range []string{"", "a b", "x\x00"} {
		if _, err := m.Layer(bad); err == nil {
			t.Fatalf("group %q accepted", bad)
		}
	}
	// A valid dial still gets through, with bytes sent after the preamble.
	c, err := layer.Dial(raft.ServerAddress(ln.Addr().String()), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("ping"))
	s, err := layer.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b := make([]byte, 4)
	s.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(s, b); err != nil || string(b) != "ping" {
		t.Fatalf("read %q %v", b, err)
	}
	layer.Close()
	if _, err := layer.Accept(); err != ErrClosed {
		t.Fatalf("accept after close: %v", err)
	}
}

// TestCloseClosesHandedOutConns: closing a layer closes the connections it
// dialed and accepted, so raft goroutines blocked on them return (raft's
// Shutdown waits for them); a connection closed before stays closed, and
// dialing a closed layer fails.
func TestCloseClosesHandedOutConns(t *testing.T) {
	ln, _, layer := serveOneGroup(t)
	dialed, err := layer.Dial(raft.ServerAddress(ln.Addr().String()), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	accepted, err := layer.Accept()
	if err != nil {
		t.Fatal(err)
	}
	early, err := layer.Dial(raft.ServerAddress(ln.Addr().String()), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	early.Close()
	// Reads blocked on both ends, as raft's RPC and handler goroutines are.
	errs := make(chan error, 2)
	for _, c := range []net.Conn{dialed, accepted} {
		go func() {
			_, err := c.Read(make([]byte, 1))
			errs <- err
		}()
	}
	layer.Close()
	for range 2 {
		select {
		case err := <-errs:
			if err == nil {
				t.Fatal("a read returned data after close")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a read on a handed-out connection still blocks after the layer closed")
		}
	}
	if _, err := layer.Dial(raft.ServerAddress(ln.Addr().String()), 5*time.Second); err == nil {
		t.Fatal("dial on a closed layer succeeded")
	}
}

// TestWaitHandlers: WaitHandlers waits for the connections the layer
// accepted (served by raft's transport goroutines, which close them when
// they return), not for the ones it dialed, and not past its bound.
func TestWaitHandlers(t *testing.T) {
	ln, _, layer := serveOneGroup(t)
	dialed, err := layer.Dial(raft.ServerAddress(ln.Addr().String()), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer dialed.Close()
	accepted, err := layer.Accept()
	if err != nil {
		t.Fatal(err)
	}
	layer.Close()
	// A handler still running: its read fails, but it has not returned.
	if layer.WaitHandlers(50 * time.Millisecond) {
		t.Fatal("WaitHandlers returned true while an accepted connection is open")
	}
	returned := make(chan bool, 1)
	go func() { returned <- layer.WaitHandlers(10 * time.Second) }()
	select {
	case <-returned:
		t.Fatal("WaitHandlers returned before the handler closed its connection")
	case <-time.After(50 * time.Millisecond):
	}
	accepted.Close() // the handler returns
	accepted.Close() // twice, as a handler and the layer may
	select {
	case ok := <-returned:
		if !ok {
			t.Fatal("WaitHandlers timed out after the handler closed its connection")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WaitHandlers still waiting after the handler closed its connection")
	}
}

// TestParkedUntilLayer: a connection for a group that is not started yet
// waits for it and is handed to its Layer once the group starts; one for
// a group that never starts is closed after the park time.
func TestParkedUntilLayer(t *testing.T) {
	ln, m, _ := serveOneGroup(t)
	m.mu.Lock()
	m.park = 5 * time.Second
	m.mu.Unlock()
	c, err := plainDial(ln.Addr().String(), "LATE", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("ping"))
	// The connection is parked before the group starts.
	deadline := time.Now().Add(10 * time.Second)
	for {
		m.mu.Lock()
		parked := m.parked
		m.mu.Unlock()
		if parked == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("connection never parked")
		}
		time.Sleep(5 * time.Millisecond)
	}
	late, err := m.Layer("LATE")
	if err != nil {
		t.Fatal(err)
	}
	s, err := late.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b := make([]byte, 4)
	s.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(s, b); err != nil || string(b) != "ping" {
		t.Fatalf("read %q %v", b, err)
	}
	m.mu.Lock()
	m.park = 50 * time.Millisecond
	parked, births := m.parked, len(m.births)
	m.mu.Unlock()
	if parked != 0 || births != 0 {
		t.Fatalf("after the group started: %d parked, %d births", parked, births)
	}
	never, err := plainDial(ln.Addr().String(), "NEVER", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer never.Close()
	never.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := never.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("connection for a group that never starts: %v, want it closed", err)
	}
}
