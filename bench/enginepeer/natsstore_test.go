package enginepeer

import (
	"unsafe"

	"github.com/nats-io/nats-server/v2/server"
)

// The file store's constructor and methods, reached by name (doc.go). The
// receiver of a method is its first argument; *fileStore is a pointer, so an
// unsafe.Pointer stands for it.

//go:linkname natsNewFileStore github.com/nats-io/nats-server/v2/server.newFileStore
func natsNewFileStore(fcfg server.FileStoreConfig, cfg server.StreamConfig) (unsafe.Pointer, error)

//go:linkname natsStoreMsg github.com/nats-io/nats-server/v2/server.(*fileStore).StoreMsg
func natsStoreMsg(fs unsafe.Pointer, subj string, hdr, msg []byte, ttl int64) (uint64, int64, error)

//go:linkname natsLoadMsg github.com/nats-io/nats-server/v2/server.(*fileStore).LoadMsg
func natsLoadMsg(fs unsafe.Pointer, seq uint64, sm *server.StoreMsg) (*server.StoreMsg, error)

//go:linkname natsLoadNextMsg github.com/nats-io/nats-server/v2/server.(*fileStore).LoadNextMsg
func natsLoadNextMsg(fs unsafe.Pointer, filter string, wc bool, start uint64, sm *server.StoreMsg) (*server.StoreMsg, uint64, error)

//go:linkname natsFlushAllPending github.com/nats-io/nats-server/v2/server.(*fileStore).FlushAllPending
func natsFlushAllPending(fs unsafe.Pointer) error

//go:linkname natsPurge github.com/nats-io/nats-server/v2/server.(*fileStore).Purge
func natsPurge(fs unsafe.Pointer) (uint64, error)

//go:linkname natsStop github.com/nats-io/nats-server/v2/server.(*fileStore).Stop
func natsStop(fs unsafe.Pointer) error

// natsFileStore is a nats-server file store as a stream of the given
// subjects, configured as nats-server configures a file stream of one
// replica with default options: no fsync per write (the server syncs every
// two minutes in the background), writes flushed as they are stored.
type natsFileStore struct {
	fs unsafe.Pointer
	sm server.StoreMsg
}

func openNats(dir string) (*natsFileStore, error) {
	fs, err := natsNewFileStore(
		server.FileStoreConfig{StoreDir: dir},
		server.StreamConfig{Name: "bench", Subjects: []string{">"}, Storage: server.FileStorage},
	)
	if err != nil {
		return nil, err
	}
	return &natsFileStore{fs: fs}, nil
}

func (n *natsFileStore) name() string { return "nats-server" }

func (n *natsFileStore) append(subj string, data []byte) error {
	_, _, err := natsStoreMsg(n.fs, subj, nil, data, 0)
	return err
}

// storeMsg is server.StoreMsg's layout, to read its unexported fields
// (TestStoreMsgLayout checks that the sizes agree).
type storeMsg struct {
	subj string
	hdr  []byte
	msg  []byte
	buf  []byte
	seq  uint64
	ts   int64
}

func fields(sm *server.StoreMsg) *storeMsg { return (*storeMsg)(unsafe.Pointer(sm)) }

func (n *natsFileStore) load(seq uint64) ([]byte, error) {
	sm, err := natsLoadMsg(n.fs, seq, &n.sm)
	if err != nil {
		return nil, err
	}
	return fields(sm).msg, nil
}

func (n *natsFileStore) next(start uint64) (uint64, error) {
	sm, _, err := natsLoadNextMsg(n.fs, ">", true, start, &n.sm)
	if err != nil {
		return 0, err
	}
	return fields(sm).seq, nil
}

// settle writes what the store buffers; its stored messages are readable
// at once, so this is for symmetry with jetwal's.
func (n *natsFileStore) settle() error { return natsFlushAllPending(n.fs) }

func (n *natsFileStore) purge() error {
	_, err := natsPurge(n.fs)
	return err
}

func (n *natsFileStore) close() error { return natsStop(n.fs) }
