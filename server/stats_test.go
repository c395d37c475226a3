package server

import (
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/jetwal/jetwal/server/auth"
)

func TestStatsAndConnections(t *testing.T) {
	s := startServer(t, Options{Auth: newAuth(t, auth.Options{Users: []auth.User{{Username: "u", Password: "p"}}})})
	sc := connect(t, s, nats.UserInfo("u", "p"), nats.Name("subscriber"))
	sub, _ := sc.SubscribeSync("stats.>")
	if err := sc.Flush(); err != nil {
		t.Fatal(err)
	}
	pc := connect(t, s, nats.UserInfo("u", "p"), nats.Name("publisher"))
	for range 3 {
		if err := pc.Publish("stats.a", []byte("hello")); err != nil {
			t.Fatal(err)
		}
	}
	if err := pc.PublishMsg(&nats.Msg{Subject: "nobody.listens", Data: []byte("12345678")}); err != nil {
		t.Fatal(err)
	}
	if err := pc.Flush(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		nextMsg(t, sub)
	}
	st := s.Stats()
	if st.InMsgs != 4 || st.InBytes != 23 || st.OutMsgs != 3 || st.OutBytes != 15 || st.Connections != 2 ||
		st.TotalConnections != 2 || st.Subscriptions != 1 || st.Start.IsZero() {
		t.Fatalf("stats %+v", st)
	}
	conns := s.Connections()
	if len(conns) != 2 {
		t.Fatalf("%d connections", len(conns))
	}
	sci, pci := conns[0], conns[1]
	if sci.Name != "subscriber" || sci.OutMsgs != 3 || sci.OutBytes != 15 || sci.InMsgs != 0 || sci.Subscriptions != 1 ||
		sci.AuthorizedUser != "u" || sci.Lang != "go" || sci.IP != "127.0.0.1" || sci.Port == 0 {
		t.Errorf("subscriber %+v", sci)
	}
	if pci.Name != "publisher" || pci.InMsgs != 4 || pci.InBytes != 23 || pci.OutMsgs != 0 || pci.CID <= sci.CID {
		t.Errorf("publisher %+v", pci)
	}
	if sci.TLSVersion != "" {
		t.Errorf("TLS version without TLS: %q", sci.TLSVersion)
	}
}
