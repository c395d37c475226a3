package consumerstate

import (
	"sync"

	"github.com/jetwal/jetwal/vfs"
)

// countFS counts operations through a vfs.HookFS.
type countFS struct {
	mu       sync.Mutex
	all, mut int
	ops      []string
}

func newCountFS(inner vfs.FS) (*vfs.HookFS, *countFS) {
	c := &countFS{}
	return &vfs.HookFS{Inner: inner, Hook: func(op, path string, mut bool) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.all++
		if mut {
			c.mut++
			c.ops = append(c.ops, op+" "+path)
		}
	}}, c
}

func (c *countFS) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.all, c.mut, c.ops = 0, 0, nil
}

func (c *countFS) counts() (all, mut int, ops []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.all, c.mut, append([]string(nil), c.ops...)
}
