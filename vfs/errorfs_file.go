package vfs

// errorFile is a File returned by ErrorFS. Its operations are matched
// against the name the file was opened with.
type errorFile struct {
	fs *ErrorFS
	f  File
}

func (e *errorFile) Name() string { return e.f.Name() }

func (e *errorFile) ReadAt(p []byte, off int64) (int, error) {
	if err := e.fs.fail(OpRead, e.f.Name()); err != nil {
		return 0, err
	}
	return e.f.ReadAt(p, off)
}

func (e *errorFile) WriteAt(p []byte, off int64) (int, error) {
	if f := e.fs.check(OpWrite, e.f.Name()); f != nil {
		n := 0
		if f.Short {
			// The inner error, if any, is dropped: the injected one is the
			// error under test.
			n, _ = e.f.WriteAt(p[:len(p)/2], off)
		}
		return n, faultErr(f, OpWrite, e.f.Name())
	}
	return e.f.WriteAt(p, off)
}

func (e *errorFile) Write(p []byte) (int, error) {
	if f := e.fs.check(OpWrite, e.f.Name()); f != nil {
		n := 0
		if f.Short {
			n, _ = e.f.Write(p[:len(p)/2])
		}
		return n, faultErr(f, OpWrite, e.f.Name())
	}
	return e.f.Write(p)
}

func (e *errorFile) Close() error {
	err := e.f.Close()
	if ferr := e.fs.fail(OpClose, e.f.Name()); ferr != nil {
		return ferr
	}
	return err
}

func (e *errorFile) Sync() error {
	if err := e.fs.fail(OpSync, e.f.Name()); err != nil {
		return err
	}
	return e.f.Sync()
}

func (e *errorFile) Truncate(size int64) error {
	if err := e.fs.fail(OpTruncate, e.f.Name()); err != nil {
		return err
	}
	return e.f.Truncate(size)
}

func (e *errorFile) Allocate(off, length int64) error {
	if err := e.fs.fail(OpAllocate, e.f.Name()); err != nil {
		return err
	}
	return e.f.Allocate(off, length)
}

func (e *errorFile) Size() (int64, error) {
	if err := e.fs.fail(OpStat, e.f.Name()); err != nil {
		return 0, err
	}
	return e.f.Size()
}

func (e *errorFile) Map(length int) (Mapping, error) {
	if err := e.fs.fail(OpMap, e.f.Name()); err != nil {
		return nil, err
	}
	return e.f.Map(length)
}
