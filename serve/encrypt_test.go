package serve

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/internal/diskgrep"
	"github.com/jetwal/jetwal/server"
)

// Words that must never be found in the clear under an encrypted store.
const (
	secretSubject = "orders.wolfram-tungsten"
	secretHeader  = "Quartz-Obsidian-Header"
	secretPayload = "payload-of-lapis-lazuli"
	secretMsgID   = "msgid-malachite"
)

// publishSecrets stores messages with the secret subject, header, payload
// and message id on a stream of replicas, with a durable consumer that
// acknowledges two of them.
func publishSecrets(t *testing.T, url string, replicas int) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	eventually(t, "create the stream", time.Minute, func() error {
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_, err := js.CreateStream(c, jetstream.StreamConfig{Name: "VAULT", Subjects: []string{"orders.>"}, Replicas: replicas})
		return err
	})
	for i := range 5 {
		m := nats.NewMsg(secretSubject)
		m.Header.Set(secretHeader, secretHeader+"-value")
		m.Data = []byte(fmt.Sprintf("%s-%d", secretPayload, i))
		id := fmt.Sprintf("%s-%d", secretMsgID, i)
		eventually(t, "publish", time.Minute, func() error {
			_, err := js.PublishMsg(ctx, m, jetstream.WithMsgID(id))
			return err
		})
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, "VAULT", jetstream.ConsumerConfig{Durable: "auditor", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.Fetch(2, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for m := range batch.Messages() {
		if err := m.DoubleAck(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestEncryptedServer: a server with a key (jetstream { key, cipher })
// stores nothing of a stream's messages, headers, message ids, consumer
// or stream names in the clear, in any file; after a restart with the key
// everything is served; with another key the stream is refused and its
// files are left as they were; with the key again it is back.
func TestEncryptedServer(t *testing.T) {
	dir := t.TempDir()
	start := func(key crypt.Config) *Server {
		t.Helper()
		s, err := New(Options{Server: server.Options{Host: "127.0.0.1"}, JetStream: true,
			Store: Store{Dir: dir, Encryption: key}})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		return s
	}
	stop := func(s *Server) {
		t.Helper()
		if err := s.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	// The control: the same workload without a key leaves every word on
	// disk, so the search below looks where the words would be.
	plainDir := t.TempDir()
	p, err := New(Options{Server: server.Options{Host: "127.0.0.1"}, JetStream: true, Store: Store{Dir: plainDir}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	publishSecrets(t, p.ClientURL(), 1)
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if hits := diskgrep.Find(t, plainDir, secretSubject, secretHeader, secretPayload, secretMsgID, `"VAULT"`, "auditor"); len(hits) < 6 {
		t.Fatalf("the plain control finds only:\n%s", strings.Join(hits, "\n"))
	}

	key := crypt.Config{Key: "a long random key for the test", Cipher: crypt.AES}
	s := start(key)
	publishSecrets(t, s.ClientURL(), 1)
	stop(s)
	if hits := diskgrep.Find(t, dir, secretSubject, secretHeader, secretPayload, secretMsgID, `"VAULT"`, "auditor"); len(hits) > 0 {
		t.Fatalf("plain text under an encrypted store:\n%s", strings.Join(hits, "\n"))
	}
	before := snapshotFiles(t, dir)
	s = start(crypt.Config{Key: "another key"})
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	js, _ := jetstream.New(nc)
	if _, err := js.Stream(context.Background(), "VAULT"); err == nil {
		t.Fatal("the stream is served with the wrong key")
	}
	nc.Close()
	stop(s)
	if after := snapshotFiles(t, dir); after != before {
		t.Fatal("opening with the wrong key changed the store's files")
	}
	s = start(key)
	defer stop(s)
	nc, err = nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ = jetstream.New(nc)
	ctx := context.Background()
	st, err := js.Stream(ctx, "VAULT")
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.GetMsg(ctx, 5)
	if err != nil || string(m.Data) != secretPayload+"-4" || m.Header.Get(secretHeader) != secretHeader+"-value" || m.Subject != secretSubject {
		t.Fatalf("message 5 after the restart: %+v %v", m, err)
	}
	ci, err := js.Consumer(ctx, "VAULT", "auditor")
	if err != nil {
		t.Fatal(err)
	}
	if info, err := ci.Info(ctx); err != nil || info.AckFloor.Stream != 2 {
		t.Fatalf("consumer after the restart: %+v %v", info, err)
	}
}

// snapshotFiles renders every file's path, size and contents digest.
func snapshotFiles(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, ".lock") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d %x\n", path, len(data), data)
		return nil
	})
	return b.String()
}

// TestEncryptedCluster: three servers with the same key run an R3 stream;
// nothing under any server's store — the replicas' stores, the stream's
// and the meta group's raft logs and snapshots — holds the messages, the
// stream's assignment or the consumer in the clear.
func TestEncryptedCluster(t *testing.T) {
	var dirs []string
	servers := startClusterWith(t, 3, func(_ int, o *Options) {
		o.Store.Encryption = crypt.Config{Key: "cluster key for the test"}
		dirs = append(dirs, o.Store.Dir)
	})
	publishSecrets(t, servers[0].ClientURL(), 3)
	time.Sleep(500 * time.Millisecond) // followers apply the last entries
	for _, s := range servers {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := s.Shutdown(ctx); err != nil {
			t.Error(err)
		}
		cancel()
	}
	for _, dir := range dirs {
		if hits := diskgrep.Find(t, dir, secretSubject, secretHeader, secretPayload, secretMsgID, `"VAULT"`, "auditor"); len(hits) > 0 {
			t.Fatalf("plain text under an encrypted cluster store:\n%s", strings.Join(hits, "\n"))
		}
	}
}
