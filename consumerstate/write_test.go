package consumerstate

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestWriteSurvivesProcessCrash: under the interval and never policies,
// Write hands the changes to the operating system, so a copy of the files
// taken at that moment (what a kill -9 leaves) reopens with them, though
// nothing was fsynced.
func TestWriteSurvivesProcessCrash(t *testing.T) {
	for _, pol := range []SyncPolicy{SyncInterval(time.Hour), SyncNever()} {
		t.Run(pol.Mode.String(), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "obs")
			st, err := Open(dir, Options{Sync: pol})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			c, err := st.Create("C", []byte(`{"durable_name":"C"}`))
			if err != nil {
				t.Fatal(err)
			}
			for round := StreamSeq(0); round < 3; round++ {
				c.Update(func(s *State) {
					for q := round*10 + 1; q <= round*10+10; q++ {
						s.Deliver(q, 1, int64(q))
						s.Ack(q)
					}
				})
				if err := c.Write(); err != nil {
					t.Fatal(err)
				}
				crashed := filepath.Join(t.TempDir(), "obs")
				if err := os.CopyFS(crashed, os.DirFS(dir)); err != nil {
					t.Fatal(err)
				}
				st2, err := Open(crashed, Options{Sync: pol})
				if err != nil {
					t.Fatal(err)
				}
				c2, err := st2.Load("C")
				if err != nil {
					t.Fatal(err)
				}
				if got, want := c2.Snapshot().AckFloor.Stream, round*10+10; got != want {
					t.Fatalf("round %d: ack floor %d after the crash copy, want %d", round, got, want)
				}
				st2.Close()
			}
		})
	}
}
