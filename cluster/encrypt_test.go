package cluster

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/internal/diskgrep"
	"github.com/jetwal/jetwal/raftstore"
	"github.com/jetwal/jetwal/server"
)

// TestEncryptedMetaGroup runs a 3-server meta group with Options.Encryption:
// puts commit and apply everywhere, snapshots are taken, and no file under
// any node's directory holds a put's key, its value or the value's base64
// (the snapshot's JSON encoding), although the log and the snapshot, read
// through the stores with the key, do. A node restarted with the key
// restores the sealed snapshot and replays the sealed log; opened with a
// wrong key its stores are refused.
func TestEncryptedMetaGroup(t *testing.T) {
	key := crypt.Config{Key: "cluster test key", Cipher: crypt.AES}
	var mu sync.Mutex
	seen := map[int]map[string][]byte{}
	record := func(i int) func(string, []byte) {
		return func(k string, v []byte) {
			mu.Lock()
			defer mu.Unlock()
			if seen[i] == nil {
				seen[i] = map[string][]byte{}
			}
			seen[i][k] = append([]byte(nil), v...)
		}
	}
	nodes := startNodesOpts(t, 3, record, func(*server.ClusterOptions) {}, func(o *Options) { o.Encryption = key })
	lead := metaLeader(t, nodes)

	secretKey := "streams/ENCRYPTED-META-KEY"
	secretVal := []byte("meta-secret-value-0123456789")
	words := []string{"ENCRYPTED-META-KEY", string(secretVal), base64.StdEncoding.EncodeToString(secretVal)}
	if err := nodes[lead].n.Put(secretKey, secretVal); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if err := nodes[lead].n.Put(fmt.Sprintf("streams/ENCRYPTED-META-KEY-%d", i), append(secretVal, byte('a'+i))); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the encrypted meta group", func() bool {
		for _, tn := range nodes {
			if v, ok := tn.n.Get(secretKey); !ok || !bytes.Equal(v, secretVal) {
				return false
			}
		}
		return true
	})
	for i, tn := range nodes {
		if err := tn.n.metaGroup().g.r.Snapshot().Error(); err != nil {
			t.Fatalf("node %d: snapshot: %v", i, err)
		}
	}
	// More entries after the snapshot, so the log holds some too.
	if err := nodes[lead].n.Put(secretKey+"-after", secretVal); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the encrypted meta group", func() bool {
		for _, tn := range nodes {
			if _, ok := tn.n.Get(secretKey + "-after"); !ok {
				return false
			}
		}
		return true
	})
	for i, tn := range nodes {
		if err := tn.n.SyncMeta(); err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
		if hits := diskgrep.Find(t, tn.opts.Dir, words...); len(hits) > 0 {
			t.Fatalf("node %d: plain text on disk: %v", i, hits)
		}
		for _, kf := range []string{"meta/raft/key.jwk", "meta/snapshots/key.jwk"} {
			if _, err := os.Stat(filepath.Join(tn.opts.Dir, kf)); err != nil {
				t.Fatalf("node %d: %v", i, err)
			}
		}
	}

	// Restart node r: it restores the sealed snapshot and replays the log.
	r := (lead + 1) % len(nodes)
	tn := nodes[r]
	if err := tn.n.Close(); err != nil {
		t.Fatal(err)
	}
	checkStoresWithKey(t, tn.opts.Dir, key, words)
	mu.Lock()
	seen[r] = nil
	mu.Unlock()
	n, err := New(tn.opts)
	if err != nil {
		t.Fatal(err)
	}
	tn.n = n
	tn.h.Set(n)
	if err := n.Start(tn.srv, record(r), func(string) {}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the encrypted meta group", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return bytes.Equal(seen[r][secretKey], secretVal) && seen[r][secretKey+"-after"] != nil
	})
	if err := nodes[lead].n.Put(secretKey+"-restarted", secretVal); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the restarted node applies the put", func() bool { _, ok := n.Get(secretKey + "-restarted"); return ok })
}

// checkStoresWithKey opens a stopped node's meta stores: a wrong key or
// none is refused; the right key reads the words back from the log and the
// latest snapshot (so the files' lack of them is the encryption's doing).
func checkStoresWithKey(t *testing.T, dir string, key crypt.Config, words []string) {
	t.Helper()
	logDir := filepath.Join(dir, "meta", "raft")
	snapDir := filepath.Join(dir, "meta", "snapshots")
	for _, bad := range []crypt.Config{{Key: "wrong"}, {}} {
		if _, err := raftstore.Open(logDir, raftstore.Options{Encryption: bad}); !errors.Is(err, crypt.ErrKeyMismatch) {
			t.Fatalf("log with key %+v: %v", bad, err)
		}
		files, err := raft.NewFileSnapshotStore(snapDir, 2, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := raftstore.WrapSnapshots(files, snapDir, raftstore.SnapshotOptions{Encryption: bad}); !errors.Is(err, crypt.ErrKeyMismatch) {
			t.Fatalf("snapshots with key %+v: %v", bad, err)
		}
	}
	var plain []byte
	st, err := raftstore.Open(logDir, raftstore.Options{Encryption: key})
	if err != nil {
		t.Fatal(err)
	}
	first, _ := st.FirstIndex()
	last, _ := st.LastIndex()
	for i := first; i <= last && first > 0; i++ {
		var l raft.Log
		if err := st.GetLog(i, &l); err != nil {
			t.Fatalf("GetLog(%d): %v", i, err)
		}
		plain = append(plain, l.Data...)
	}
	st.Close()
	files, err := raft.NewFileSnapshotStore(snapDir, 2, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	snaps, err := raftstore.WrapSnapshots(files, snapDir, raftstore.SnapshotOptions{Encryption: key})
	if err != nil {
		t.Fatal(err)
	}
	metas, err := snaps.List()
	if err != nil || len(metas) == 0 {
		t.Fatalf("no snapshot: %v", err)
	}
	_, rc, err := snaps.Open(metas[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(words[0])) || !bytes.Contains(b, []byte(words[2])) {
		t.Fatalf("the snapshot's plaintext lacks the key or the value: %.200q", b)
	}
	if !bytes.Contains(plain, []byte(words[1])) {
		t.Fatal("the log's plaintext lacks the value")
	}
}
