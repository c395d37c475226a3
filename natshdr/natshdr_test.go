package natshdr

import "testing"

func TestBuildAndGet(t *testing.T) {
	if got := string(Status(404, "Message Not Found")); got != "NATS/1.0 404 Message Not Found\r\n\r\n" {
		t.Fatalf("Status = %q", got)
	}
	if got := string(Status(503, "")); got != "NATS/1.0 503\r\n\r\n" {
		t.Fatalf("Status without description = %q", got)
	}
	b := AppendStatusLine(nil, "100 Idle Heartbeat")
	b = AppendUint(b, "Nats-Last-Consumer", 7)
	b = AppendInt(b, "Nats-Pending-Bytes", -1)
	b = AppendString(b, "Nats-Subject", "a.b")
	b = End(b)
	want := "NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 7\r\nNats-Pending-Bytes: -1\r\nNats-Subject: a.b\r\n\r\n"
	if string(b) != want {
		t.Fatalf("built %q, want %q", b, want)
	}
	if v := Get(b, "nats-last-consumer"); string(v) != "7" {
		t.Fatalf("Get = %q", v)
	}
	if v := Get(b, "Missing"); v != nil {
		t.Fatalf("Get of a missing field = %q", v)
	}
	more := End(AppendInt(Reopen(nil, b), "Nats-Msg-Size", 5))
	if v := Get(more, "Nats-Msg-Size"); string(v) != "5" || string(Get(more, "Nats-Subject")) != "a.b" {
		t.Fatalf("Reopen lost or did not add fields: %q", more)
	}
	if got := string(End(AppendInt(Reopen(nil, []byte("garbage")), "K", 1))); got != "NATS/1.0\r\nK: 1\r\n\r\n" {
		t.Fatalf("Reopen of an incomplete block = %q", got)
	}
}
