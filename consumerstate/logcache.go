package consumerstate

import (
	"container/list"
	"fmt"
	"sync"

	"github.com/jetwal/jetwal/vfs"
)

// A consumer's log file is open only while it is in use: a store keeps at
// most Options.MaxOpenLogs of them open, the ones used last. Opening one
// more closes the least recently used log whose changes are all durable
// (synced == written), so that no fsync error can be missed by a later
// fsync through a new descriptor; a log with changes still to sync, or
// one busy in a flush (its fmu held), stays open and the cap is exceeded
// until it is done. A closed log is opened again at its next write.
//
// Without the cap a stream of thousands of durable consumers held one
// descriptor each once their state had been written, and a restart
// opened them all at once.
type logCache struct {
	mu  sync.Mutex
	max int
	lru list.List // of *Consumer, the most recently used at the front
}

// logLocked returns c's log, opening it again if the cache closed it, and
// marks it used. Called with c.fmu held.
func (c *Consumer) logLocked() (vfs.File, error) {
	if c.fmu.log == nil {
		f, err := c.fs.OpenRW(c.fmu.logPath)
		if err != nil {
			return nil, fmt.Errorf("%s: open: %w", c.fmu.logPath, err)
		}
		c.fmu.log = f
	}
	c.store.logs.use(c)
	return c.fmu.log, nil
}

// use makes c the most recently used open log and closes others beyond
// the cap. c's fmu is held by the caller (or c is not yet shared); the
// others' are only tried, never waited for, so no two consumers wait on
// each other.
func (lc *logCache) use(c *Consumer) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if c.lruElem != nil {
		lc.lru.MoveToFront(c.lruElem)
	} else {
		c.lruElem = lc.lru.PushFront(c)
	}
	for e := lc.lru.Back(); e != nil && lc.lru.Len() > lc.max; {
		prev := e.Prev()
		if v := e.Value.(*Consumer); v != c && v.fmu.TryLock() {
			if v.closeLogIfIdleLocked() {
				lc.lru.Remove(e)
				v.lruElem = nil
			}
			v.fmu.Unlock()
		}
		e = prev
	}
}

// forget takes c out of the cache (its files are being closed).
func (lc *logCache) forget(c *Consumer) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if c.lruElem != nil {
		lc.lru.Remove(c.lruElem)
		c.lruElem = nil
	}
}

// closeLogIfIdleLocked closes c's log if every change written to it is
// durable, and reports whether it is closed. A close error is only
// possible for a descriptor with nothing left to write back; it is
// dropped. Called with c.fmu held.
func (c *Consumer) closeLogIfIdleLocked() bool {
	if c.fmu.log == nil {
		return true
	}
	if c.fmu.synced != c.fmu.written || c.fmu.closed {
		return false
	}
	_ = c.fmu.log.Close()
	c.fmu.log = nil
	return true
}
