package jetstream

import (
	"testing"

	"github.com/jetwal/jetwal/jetstream/api"
)

// TestPeerOpsNeedACluster: on a single server, moving a stream's replica
// (STREAM.PEER.REMOVE, STREAM.PEER.EVACUATE) is nats-server's 10010, in
// each operation's own response type.
func TestPeerOpsNeedACluster(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	for op, typ := range map[string]string{
		"STREAM.PEER.REMOVE":   api.TypeStreamRemovePeer,
		"STREAM.PEER.EVACUATE": api.TypeStreamEvacuatePeer,
	} {
		var resp api.Response
		requestJSON(t, nc, api.Prefix+op+".S", `{"peer":"n2"}`, &resp)
		if resp.Type != typ || resp.Error == nil || resp.Error.ErrCode != api.ErrClusterRequired {
			t.Fatalf("%s: %+v %+v", op, resp, resp.Error)
		}
	}
}
