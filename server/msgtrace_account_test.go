package server

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// TestMsgTraceInAccount: a trace follows the publisher's account: its
// ingress names the account, the egress lists only that account's
// subscribers, and the event goes to the destination in that account.
func TestMsgTraceInAccount(t *testing.T) {
	s := startServer(t, Options{Auth: accountAuth(t), Accounts: []string{"A", "B"}})
	na := connect(t, s, nats.UserInfo("a", "pw"), nats.Name("sender"))
	nb := connect(t, s, nats.UserInfo("b", "pw"), nats.Name("other"))
	ra := connect(t, s, nats.UserInfo("a", "pw"), nats.Name("receiver"))
	sub, _ := ra.SubscribeSync("orders.new")
	ra.Flush()
	otherSub, _ := nb.SubscribeSync("orders.new")
	otherTraces, _ := nb.SubscribeSync("my.trace")
	nb.Flush()
	traces, _ := na.SubscribeSync("my.trace")
	na.Flush()

	if err := na.PublishMsg(tracedMsg("orders.new", "my.trace", false)); err != nil {
		t.Fatal(err)
	}
	ev := nextTrace(t, traces)
	wantTypes(t, ev, "in", "eg")
	if in := ev.Events[0]; in.Account != "A" || in.Name != "sender" {
		t.Fatalf("ingress %+v, want account A", in)
	}
	if eg := ev.Events[1]; eg.Name != "receiver" {
		t.Fatalf("egress %+v, want A's receiver only", eg)
	}
	if _, err := sub.NextMsg(5 * time.Second); err != nil {
		t.Fatalf("A's subscriber: %v", err)
	}
	// Anything the server sent B before the event is read once B's PONG is.
	if err := nb.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*nats.Subscription{otherSub, otherTraces} {
		if n, _, _ := s.Pending(); n != 0 {
			t.Fatalf("B's subscription %q got %d of A's messages", s.Subject, n)
		}
	}
}
