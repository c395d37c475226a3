package consumerstate

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jetwal/jetwal/vfs"
)

// twoRecordConsumer builds consumer "c" in /obs whose log holds exactly two
// records on the initial empty snapshot, as a crash after the second flush
// leaves it. It returns the states after each record.
func twoRecordConsumer(t *testing.T) (*vfs.MemFS, State, State) {
	t.Helper()
	mem := vfs.NewMemFS()
	s := openStore(t, mem, "/obs", Options{CompactBytes: 1 << 20})
	c, err := s.Create("c", []byte(testCfg))
	if err != nil {
		t.Fatal(err)
	}
	// Write the consumer's directory (an empty snapshot) now, so that both
	// flushes below append log records.
	if err := c.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	deliverN(t, c, 1, 4)
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	first := c.Snapshot()
	mustUpdate(t, c, func(s *State) { s.Ack(1); s.Ack(2) })
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	second := c.Snapshot()
	// What a crash right now leaves (both records synced): a clean Close
	// would fold the log into a new snapshot.
	img := mem.CrashClone()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return img, first, second
}

func editFile(t *testing.T, fsys vfs.FS, path string, edit func([]byte) []byte) {
	t.Helper()
	b, err := readFile(fsys, path)
	if err != nil {
		t.Fatal(err)
	}
	b = edit(b)
	if err := writeFile(fsys, path, b); err != nil {
		t.Fatal(err)
	}
}

const (
	cDir     = "/obs/c"
	cLog     = "/obs/c/state-0000000000000001.log"
	cState   = "/obs/c/state.dat"
	cMeta    = "/obs/c/meta.inf"
	cMetaSum = "/obs/c/meta.sum"
)

// TestCorruption damages one file of a consumer per case. Corruption must
// be reported naming the file (Load and Check agree); a torn log tail must
// be cut off, recovering the state of the records before it.
func TestCorruption(t *testing.T) {
	recLen := func(b []byte) int { // length of the first record in a log
		return recHeaderSize + int(uint32(b[logHeaderSize+4])|uint32(b[logHeaderSize+5])<<8)
	}
	tests := []struct {
		name     string
		corrupt  func(t *testing.T, fsys vfs.FS)
		wantFile string // "" means recovery succeeds
		want     int    // 1 or 2: state after that many records
		torn     bool
		salvaged bool // loads with the damage in wantFile reported
	}{
		{name: "state.dat bit flip", wantFile: "state.dat", corrupt: func(t *testing.T, fsys vfs.FS) {
			editFile(t, fsys, cState, func(b []byte) []byte { b[10] ^= 4; return b })
		}},
		{name: "state.dat truncated", wantFile: "state.dat", corrupt: func(t *testing.T, fsys vfs.FS) {
			editFile(t, fsys, cState, func(b []byte) []byte { return b[:len(b)-3] })
		}},
		{name: "state.dat missing", wantFile: "state.dat", corrupt: func(t *testing.T, fsys vfs.FS) {
			if err := fsys.Remove(cState); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "meta.inf changed", wantFile: "meta.sum", corrupt: func(t *testing.T, fsys vfs.FS) {
			editFile(t, fsys, cMeta, func(b []byte) []byte { b[3] = 'X'; return b })
		}},
		{name: "meta.sum garbage", wantFile: "meta.sum", corrupt: func(t *testing.T, fsys vfs.FS) {
			editFile(t, fsys, cMetaSum, func(b []byte) []byte { return []byte("not hex at all!!") })
		}},
		{name: "meta.sum short", wantFile: "meta.sum", corrupt: func(t *testing.T, fsys vfs.FS) {
			editFile(t, fsys, cMetaSum, func(b []byte) []byte { return b[:8] })
		}},
		{name: "meta.sum missing", wantFile: "meta.sum", corrupt: func(t *testing.T, fsys vfs.FS) {
			if err := fsys.Remove(cMetaSum); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "meta.inf missing", wantFile: "meta.inf", corrupt: func(t *testing.T, fsys vfs.FS) {
			if err := fsys.Remove(cMeta); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "log header damaged", wantFile: ".log", corrupt: func(t *testing.T, fsys vfs.FS) {
			editFile(t, fsys, cLog, func(b []byte) []byte { b[9] ^= 1; return b })
		}},
		// Damage that good records follow is salvaged: the consumer loads
		// with the damage reported (Recovery.Damaged) and Check names the
		// file. The second record acks messages whose delivery was in the
		// lost first one, so its operations no longer apply: state 0.
		{name: "first record damaged, second good", wantFile: ".log", salvaged: true, corrupt: func(t *testing.T, fsys vfs.FS) {
			editFile(t, fsys, cLog, func(b []byte) []byte { b[logHeaderSize+recHeaderSize] ^= 0x10; return b })
		}},
		{name: "first record zeroed, second good", wantFile: ".log", salvaged: true, corrupt: func(t *testing.T, fsys vfs.FS) {
			editFile(t, fsys, cLog, func(b []byte) []byte {
				clear(b[logHeaderSize : logHeaderSize+recLen(b)])
				return b
			})
		}},
		{name: "last record damaged: torn tail", want: 1, torn: true, corrupt: func(t *testing.T, fsys vfs.FS) {
			editFile(t, fsys, cLog, func(b []byte) []byte { b[len(b)-1] ^= 0x10; return b })
		}},
		{name: "last record cut short: torn tail", want: 1, torn: true, corrupt: func(t *testing.T, fsys vfs.FS) {
			editFile(t, fsys, cLog, func(b []byte) []byte { return b[:len(b)-2] })
		}},
		{name: "zeros after the last record: torn tail", want: 2, torn: true, corrupt: func(t *testing.T, fsys vfs.FS) {
			editFile(t, fsys, cLog, func(b []byte) []byte { return append(b, make([]byte, 100)...) })
		}},
		{name: "log missing: snapshot alone", want: 0, corrupt: func(t *testing.T, fsys vfs.FS) {
			if err := fsys.Remove(cLog); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "log empty: created, never synced", want: 0, torn: false, corrupt: func(t *testing.T, fsys vfs.FS) {
			editFile(t, fsys, cLog, func(b []byte) []byte { return nil })
		}},
		{name: "log holds a prefix of its header", want: 0, torn: true, corrupt: func(t *testing.T, fsys vfs.FS) {
			editFile(t, fsys, cLog, func(b []byte) []byte { return b[:logHeaderSize-5] })
		}},
		{name: "log all zeros", want: 0, torn: true, corrupt: func(t *testing.T, fsys vfs.FS) {
			editFile(t, fsys, cLog, func(b []byte) []byte { return make([]byte, len(b)) })
		}},
		{name: "log header zeroed, records intact", wantFile: ".log", corrupt: func(t *testing.T, fsys vfs.FS) {
			editFile(t, fsys, cLog, func(b []byte) []byte { clear(b[:logHeaderSize]); return b })
		}},
		{name: "log header of another generation", wantFile: ".log", corrupt: func(t *testing.T, fsys vfs.FS) {
			editFile(t, fsys, cLog, func(b []byte) []byte { copy(b, logHeader(2, false)); return b })
		}},
		{name: "stale files are removed", want: 2, corrupt: func(t *testing.T, fsys vfs.FS) {
			if err := writeFile(fsys, filepath.Join(cDir, logName(7)), []byte("old")); err != nil {
				t.Fatal(err)
			}
			if err := writeFile(fsys, filepath.Join(cDir, stateTmpFile), []byte("half")); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem, first, second := twoRecordConsumer(t)
			tc.corrupt(t, mem)
			checkErr := Check("/obs", mem)
			s := openStore(t, mem, "/obs", Options{})
			defer s.Close()
			c, err := s.Load("c")
			if tc.salvaged {
				if !errors.Is(checkErr, ErrCorrupt) || !strings.Contains(checkErr.Error(), tc.wantFile) {
					t.Fatalf("check: %v, want ErrCorrupt naming %s", checkErr, tc.wantFile)
				}
				if err != nil {
					t.Fatalf("load: %v, want the damage salvaged", err)
				}
				rec := c.Recovery()
				if len(rec.Damaged) != 1 || !strings.Contains(rec.Damaged[0].File, tc.wantFile) {
					t.Fatalf("recovery %+v does not report the damage in %s", rec, tc.wantFile)
				}
				checkErr = nil // checked; the rest is as for a recovery
			} else if tc.wantFile != "" {
				for what, e := range map[string]error{"load": err, "check": checkErr} {
					if !errors.Is(e, ErrCorrupt) {
						t.Fatalf("%s: %v, want ErrCorrupt", what, e)
					}
					if !strings.Contains(e.Error(), tc.wantFile) {
						t.Fatalf("%s: error %q does not name %s", what, e, tc.wantFile)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			if checkErr != nil {
				t.Fatalf("check: %v", checkErr)
			}
			want := [...]State{{}, first, second}[tc.want]
			if got := c.Snapshot(); !got.Equal(&want) {
				t.Fatalf("recovered %+v, want state after %d records %+v", got, tc.want, want)
			}
			rec := c.Recovery()
			if tc.torn != (rec.TornBytes > 0) {
				t.Fatalf("recovery %+v, torn tail expected: %v", rec, tc.torn)
			}
			// Recovery repaired the files: a clean reopen after more work
			// sees everything, and Check is happy.
			mustUpdate(t, c, func(s *State) { s.Deliver(s.Delivered.Stream+1, 1, 5) })
			if err := c.Flush(); err != nil {
				t.Fatal(err)
			}
			want = c.Snapshot()
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if err := Check("/obs", mem); err != nil {
				t.Fatalf("check after repair: %v", err)
			}
			// One log is left: the current generation's (checkpoints at
			// the salvage and at Close moved the generation on).
			names, _ := mem.ReadDir(cDir)
			logs := 0
			for _, n := range names {
				if n == stateTmpFile {
					t.Fatalf("stale file %s left after repair", n)
				}
				if strings.HasSuffix(n, ".log") {
					logs++
				}
			}
			if logs != 1 {
				t.Fatalf("%d logs left after repair and close: %v", logs, names)
			}
			s = openStore(t, mem.CrashClone(), "/obs", Options{})
			c, err = s.Load("c")
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Snapshot(); !got.Equal(&want) {
				t.Fatalf("after repair and reopen: %+v, want %+v", got, want)
			}
			if r := c.Recovery(); r.TornBytes != 0 {
				t.Fatalf("torn tail again after repair: %+v", r)
			}
		})
	}
}

// TestConfigUpdateRecovery leaves the files of an interrupted config
// update behind and checks that opening rolls it forward or back.
func TestConfigUpdateRecovery(t *testing.T) {
	newCfg := []byte(`{"durable_name":"c1","ack_policy":"all"}`)
	tests := []struct {
		name  string
		setup func(t *testing.T, fsys vfs.FS)
		want  string
	}{
		{"both new files durable", func(t *testing.T, fsys vfs.FS) {
			if err := writeMeta(fsys, cDir, newCfg, newSuffix); err != nil {
				t.Fatal(err)
			}
		}, string(newCfg)},
		{"meta.inf renamed, meta.sum.new left", func(t *testing.T, fsys vfs.FS) {
			if err := writeMeta(fsys, cDir, newCfg, newSuffix); err != nil {
				t.Fatal(err)
			}
			if err := fsys.Rename(cMeta+newSuffix, cMeta); err != nil {
				t.Fatal(err)
			}
		}, string(newCfg)},
		{"meta.inf.new half written", func(t *testing.T, fsys vfs.FS) {
			if err := writeFile(fsys, cMeta+newSuffix, newCfg[:10]); err != nil {
				t.Fatal(err)
			}
			if err := writeFile(fsys, cMetaSum+newSuffix, metaSum(newCfg)); err != nil {
				t.Fatal(err)
			}
		}, testCfg},
		{"only meta.inf.new", func(t *testing.T, fsys vfs.FS) {
			if err := writeFile(fsys, cMeta+newSuffix, newCfg); err != nil {
				t.Fatal(err)
			}
		}, testCfg},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem, _, _ := twoRecordConsumer(t)
			tc.setup(t, mem)
			if err := Check("/obs", mem); err != nil {
				t.Fatalf("check: %v", err)
			}
			s := openStore(t, mem, "/obs", Options{})
			c, err := s.Load("c")
			if err != nil {
				t.Fatal(err)
			}
			if string(c.Config()) != tc.want {
				t.Fatalf("config %s, want %s", c.Config(), tc.want)
			}
			s.Close()
			names, _ := mem.ReadDir(cDir)
			for _, n := range names {
				if strings.HasSuffix(n, newSuffix) {
					t.Fatalf("%s left behind", n)
				}
			}
			inf, _ := readFile(mem, cMeta)
			sum, _ := readFile(mem, cMetaSum)
			if _, err := checkMeta(cDir, inf, sum, opener{}); err != nil || string(inf) != tc.want {
				t.Fatalf("meta files after open: %s %s %v", inf, sum, err)
			}
		})
	}
}

func TestCheckSingleConsumerDir(t *testing.T) {
	mem, _, _ := twoRecordConsumer(t)
	if err := Check(cDir, mem); err != nil {
		t.Fatal(err)
	}
	editFile(t, mem, cState, func(b []byte) []byte { b[len(b)-1] ^= 1; return b })
	if err := Check(cDir, mem); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("check of damaged consumer: %v", err)
	}
}

// TestDamagedLogKeepsLaterRecords: two flipped bytes in the middle of a log
// of 500 acked messages no longer reset the consumer (it used to fail to
// load, and be created afresh at ack floor 0): every intact record before
// and after the damage is replayed, the damage is reported with its file
// and offset by Load and by Check, and the consumer is checkpointed so the
// damaged log is retired.
func TestDamagedLogKeepsLaterRecords(t *testing.T) {
	mem := vfs.NewMemFS()
	s := openStore(t, mem, "/obs", Options{CompactBytes: 1 << 20})
	c, err := s.Create("c", []byte(testCfg))
	if err != nil {
		t.Fatal(err)
	}
	for q := StreamSeq(1); q <= 500; q++ {
		mustUpdate(t, c, func(s *State) { s.Deliver(q, 1, int64(q)); s.Ack(q) })
		if err := c.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	mem = mem.CrashClone() // as a kill -9 leaves it: the acks in the log
	s.Close()
	var flipped int
	editFile(t, mem, cLog, func(b []byte) []byte {
		flipped = len(b) / 2
		b[flipped] ^= 0xff
		b[flipped+1] ^= 0xff
		return b
	})
	if err := Check("/obs", mem); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), cLog) {
		t.Fatalf("check: %v, want ErrCorrupt naming %s", err, cLog)
	}
	s = openStore(t, mem, "/obs", Options{})
	c, err = s.Load("c")
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	rec := c.Recovery()
	if len(rec.Damaged) != 1 || rec.Damaged[0].File != cLog || rec.Damaged[0].Offset > int64(flipped) ||
		rec.Damaged[0].Offset+rec.Damaged[0].Bytes <= int64(flipped) {
		t.Fatalf("recovery %+v does not locate the damage at offset %d of %s", rec, flipped, cLog)
	}
	if got := c.Snapshot().AckFloor.Stream; got != 500 {
		t.Fatalf("ack floor %d after salvage, want 500", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := Check("/obs", mem); err != nil {
		t.Fatalf("check after the damaged log was retired: %v", err)
	}
}
