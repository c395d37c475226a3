package cluster

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Replica data left behind. A server that was down while a stream's
// replica was taken from it (fewer replicas, a peer moved, the stream
// deleted) never ran Leave or Remove for it: its directory stays under
// streams/. The JetStream layer lists those directories once its copy of
// the meta map is current (SyncMeta) and removes the ones whose stream no
// longer names this server.

// ErrReplicaOpen: the replica's data is in use (open, or being opened).
var ErrReplicaOpen = errors.New("cluster: replica open")

// StreamDirs returns the streams this server holds replica data of.
func (n *Node) StreamDirs() ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(n.opts.Dir, "streams"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cluster: listing replicas: %w", err)
	}
	var out []string
	for _, e := range ents {
		name, err := hex.DecodeString(e.Name())
		if err != nil || !e.IsDir() {
			continue // not a replica's directory
		}
		out = append(out, string(name))
	}
	return out, nil
}

// RemoveStreamData deletes the replica data of stream name, which must not
// be open or being opened (ErrReplicaOpen).
func (n *Node) RemoveStreamData(name string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return ErrClosed
	}
	if n.replicas[name] != nil || n.opening[name] > 0 {
		return ErrReplicaOpen
	}
	if err := os.RemoveAll(filepath.Join(n.opts.Dir, "streams", hex.EncodeToString([]byte(name)))); err != nil {
		return fmt.Errorf("cluster: removing replica data of %s: %w", name, err)
	}
	return nil
}
