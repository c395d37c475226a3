package dedupe

import (
	"strings"
	"testing"
	"time"
)

func TestDedupeExpiry(t *testing.T) {
	d := New(int64(time.Second))
	base := time.Now().UnixNano()
	d.Add("a", 1, base, false)
	p := d.Add("b", 2, base, true) // pending: stays, and holds back later ones
	d.Add("c", 3, base, false)
	d.Expire(base + int64(2*time.Second))
	if d.Lookup("a") != nil || d.Lookup("b") == nil || d.Lookup("c") == nil {
		t.Fatal("expiry order wrong")
	}
	p.Pending = false
	d.Expire(base + int64(2*time.Second))
	if d.Len() != 0 {
		t.Fatalf("%d left", d.Len())
	}
	// Re-adding an id replaces it; removing a stale entry keeps the new one.
	old := d.Add("x", 1, base, true)
	d.Add("x", 2, base, false)
	d.Remove(old)
	if e := d.Lookup("x"); e == nil || e.Seq != 2 {
		t.Fatalf("replaced entry %+v", e)
	}
	for i := 0; i < 5000; i++ {
		d.Add("k", uint64(i), base, false)
	}
	d.Expire(base + int64(time.Hour))
	if d.Len() != 0 || len(d.fifo) > 2048 {
		t.Fatalf("fifo not compacted: len %d", len(d.fifo))
	}
}

// TestArrived: the entries come in arrival order, expired ones left out,
// each saying whether it is still its id's entry.
func TestArrived(t *testing.T) {
	d := New(int64(time.Second))
	base := time.Now().UnixNano()
	d.Add("a", 1, base-int64(2*time.Second), false)
	b := d.Add("b", 2, base, false)
	d.Add("c", 3, base, true)
	d.Add("b", 4, base, false)
	d.Expire(base)
	var got []string
	for e, current := range d.Arrived() {
		got = append(got, e.ID+map[bool]string{true: "+", false: "-"}[current])
	}
	if want := "b- c+ b+"; strings.Join(got, " ") != want {
		t.Fatalf("arrived %v, want %s", got, want)
	}
	if b.Seq != 2 || d.Lookup("b").Seq != 4 {
		t.Fatal("the replaced entry changed")
	}
}
