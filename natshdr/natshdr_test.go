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

func TestFieldsAndLookup(t *testing.T) {
	hdr := []byte("NATS/1.0\r\nA: 1\r\nno colon\r\nB :\r\nC:  x y \r\n\r\nD: after end\r\n")
	var names, values, lines []string
	Fields(hdr, func(n, v, line []byte) bool {
		names, values, lines = append(names, string(n)), append(values, string(v)), append(lines, string(line))
		return true
	})
	if want := []string{"A", "", "B ", "C"}; len(names) != 4 || names[0] != want[0] || names[1] != want[1] || names[2] != want[2] || names[3] != want[3] {
		t.Fatalf("names %q, want %q (the blank line ends the block)", names, want)
	}
	if values[3] != "x y" || lines[1] != "no colon\r\n" {
		t.Fatalf("values %q lines %q", values, lines)
	}
	n := 0
	Fields(hdr, func(_, _, _ []byte) bool { n++; return false })
	if n != 1 {
		t.Fatalf("Fields went on after fn returned false: %d calls", n)
	}
	if v, ok := Lookup(hdr, "b"); !ok || v != nil {
		t.Fatalf("Lookup of an empty field = %q, %v; want present and empty", v, ok)
	}
	if v := Get(hdr, "b"); v != nil {
		t.Fatalf("Get of an empty field = %q", v)
	}
	if _, ok := Lookup(hdr, "D"); ok {
		t.Fatal("Lookup found a field after the end of the block")
	}
	if v, ok := Lookup(hdr, "c"); !ok || string(v) != "x y" {
		t.Fatalf("Lookup c = %q %v", v, ok)
	}
}
