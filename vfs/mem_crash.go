package vfs

import (
	"math/rand/v2"
	"sort"
)

// CrashClone returns a new MemFS holding only what is durable in m: the
// durable entry table of every directory reachable from the root through
// durable entries, and the durable bytes of every file those entries name.
// It is the disk as found after a power cut. m is not changed and stays
// usable; the clone shares no memory with it and holds no locks.
//
// If an inode is reachable under two durable names (a rename whose source
// and target directories were synced separately), the clone keeps one inode
// under both names.
func (m *MemFS) CrashClone() *MemFS { return m.crashClone(nil) }

// CrashCloneTorn is CrashClone, except that for every file whose current
// length exceeds its durable length, a random prefix (possibly empty,
// possibly all) of the unsynced bytes past the durable length is kept as
// well. That models appends that partly reached the disk before the power
// cut. Unsynced overwrites within the durable length are still lost.
//
// Files are visited in sorted path order, so the same m and the same rng
// state give the same clone: a crash test can print its seed and replay.
func (m *MemFS) CrashCloneTorn(rng *rand.Rand) *MemFS { return m.crashClone(rng) }

// ProcessCrashClone returns a new MemFS holding everything written to m,
// synced or not: the disk as a new process finds it after this one was
// killed (kill -9), with the operating system still up. The clone holds no
// locks and shares no memory with m.
func (m *MemFS) ProcessCrashClone() *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := &cloner{all: true, seen: make(map[*inode]*inode)}
	return &MemFS{root: c.clone(m.root), locks: make(map[*inode]bool)}
}

func (m *MemFS) crashClone(rng *rand.Rand) *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := &cloner{rng: rng, seen: make(map[*inode]*inode)}
	return &MemFS{root: c.clone(m.root), locks: make(map[*inode]bool)}
}

// cloner copies the durable tree of one MemFS. It runs with the source's mu
// held.
type cloner struct {
	rng  *rand.Rand        // nil: keep no unsynced bytes
	all  bool              // keep everything written, synced or not
	seen map[*inode]*inode // source inode -> its clone
}

func (c *cloner) clone(n *inode) *inode {
	if d, ok := c.seen[n]; ok {
		return d
	}
	if !n.isDir {
		keep := len(n.durable)
		if extra := len(n.data) - keep; extra > 0 && c.rng != nil {
			keep += c.rng.IntN(extra + 1)
		}
		d := newFileInode()
		if c.all {
			d.data = append([]byte(nil), n.data...)
			d.durable = append([]byte(nil), n.data...)
			c.seen[n] = d
			return d
		}
		d.data = make([]byte, keep)
		copy(d.data, n.durable)
		if keep > len(n.durable) {
			copy(d.data[len(n.durable):], n.data[len(n.durable):keep])
		}
		d.durable = append([]byte(nil), d.data...)
		c.seen[n] = d
		return d
	}
	d := newDirInode()
	c.seen[n] = d
	table := n.durableEntries
	if c.all {
		table = n.entries
	}
	names := make([]string, 0, len(table))
	for name := range table {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		child := c.clone(table[name])
		d.entries[name] = child
		d.durableEntries[name] = child
	}
	return d
}
