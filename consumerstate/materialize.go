package consumerstate

import (
	"fmt"
	"path/filepath"
)

// materialize writes the directory of a consumer that so far exists only in
// its store's catalogue, and makes it durable. A consumer already
// materialized costs nothing.
func (c *Consumer) materialize() error {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	if c.fmu.materialized {
		return nil
	}
	if c.fmu.failed != nil {
		return c.fmu.failed
	}
	return c.materializeLocked()
}

// materializeLocked writes the consumer's directory with its current config
// and state (a snapshot of generation 1 and the empty log 1), renames it
// into place and syncs the obs directory: from then on the directory, not
// the catalogue, holds the consumer. A crash before the sync leaves the
// catalogue's consumer, with an empty state; no change this call writes
// was acknowledged before it returns. Called with fmu held.
func (c *Consumer) materializeLocked() error {
	c.mu.Lock()
	v := c.mu.jrnl.ops
	cfg := c.mu.cfg
	sb := c.store.getSnapBuffer()
	sb.buf = sb.enc.appendEncoded(sb.buf[:0], &c.mu.state, 1)
	c.mu.jrnl.take(c.mu.jrnl.buf)
	c.mu.Unlock()
	seal := c.store.seal
	snap, meta := sb.buf, cfg
	var err error
	if seal.on() {
		sb.sealed, err = seal.sealSnapshot(sb.sealed[:0], sb.buf, c.name)
		snap = sb.sealed
		if err == nil {
			meta, err = seal.sealMeta(c.name, cfg)
		}
	}
	snapSize := int64(len(snap))
	obs := c.store.dir
	if err == nil {
		err = buildConsumerDir(c.fs, obs, c.name, meta, snap, seal.on())
	}
	c.store.putSnapBuffer(sb)
	if err == nil {
		if err = c.fs.SyncDir(obs); err != nil {
			err = fmt.Errorf("%s: sync dir: %w", obs, err)
		}
	}
	if err != nil {
		return c.fail(fmt.Errorf("create directory: %w", err))
	}
	logPath := filepath.Join(c.dir, logName(1))
	f, err := c.fs.OpenRW(logPath)
	if err != nil {
		return c.fail(err)
	}
	c.fmu.log, c.fmu.logPath, c.fmu.logSize = f, logPath, logHeaderSize
	c.fmu.gen, c.fmu.snapSize = 1, snapSize
	c.store.logs.use(c)
	c.fmu.materialized = true
	c.fmu.written, c.fmu.synced = v, v
	c.setJournalLimit()
	return nil
}
