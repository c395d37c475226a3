package vfs

import (
	"errors"
	"sync"
)

// SyncAll makes the files' contents and the directories' entries durable.
// On the OS filesystem the fsyncs run concurrently, so that the kernel can
// fold them into one journal commit (ext4 and xfs group concurrent fsyncs):
// a few small files cost about one commit instead of one each. On any
// other FS (MemFS and the fault-injecting wrappers) they run one after the
// other, in order, stopping at the first error, so crash tests see a
// deterministic sequence of syncs. Concurrent syncs all run; every error
// found is returned.
func SyncAll(fsys FS, files []File, dirs []string) error {
	n := len(files) + len(dirs)
	sync1 := func(i int) error {
		if i < len(files) {
			return files[i].Sync()
		}
		return fsys.SyncDir(dirs[i-len(files)])
	}
	if _, ok := fsys.(osFS); !ok || n < 2 {
		for i := range n {
			if err := sync1(i); err != nil {
				return err
			}
		}
		return nil
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = sync1(i)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
