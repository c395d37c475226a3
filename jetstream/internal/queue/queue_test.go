package queue

import "testing"

// TestWorkQueueOrderAndClose: one key runs in submission order, Close runs
// what is queued and refuses more, and a limit refuses work past it.
func TestWorkQueueOrderAndClose(t *testing.T) {
	q := New(0)
	var got []int
	for i := 0; i < 1000; i++ {
		i := i
		if !q.Submit(func() { got = append(got, i) }) {
			t.Fatal("submit refused")
		}
	}
	q.Close()
	if len(got) != 1000 {
		t.Fatalf("ran %d", len(got))
	}
	for i, v := range got {
		if v != i {
			t.Fatalf("out of order at %d: %d", i, v)
		}
	}
	if q.Submit(func() {}) {
		t.Fatal("submit after close accepted")
	}
	q.Close() // idempotent

	full := New(2)
	block := make(chan struct{})
	started := make(chan struct{})
	full.Submit(func() { close(started); <-block })
	<-started
	if !full.Submit(func() {}) || !full.Submit(func() {}) || full.Submit(func() {}) {
		t.Fatal("limit not applied")
	}
	close(block)
	full.Close()
}
