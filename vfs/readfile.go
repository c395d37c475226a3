package vfs

import (
	"errors"
	"fmt"
	"io"
)

// ErrTooLarge is wrapped by ReadFile's error for a file over its bound.
var ErrTooLarge = errors.New("vfs: file larger than expected")

// ReadFile reads the whole file at path through fs, refusing one larger
// than max bytes (max <= 0: no bound) with an error wrapping ErrTooLarge,
// so that a damaged or foreign file cannot size a huge allocation. A file
// that reads shorter than its size is io.ErrUnexpectedEOF.
func ReadFile(fs FS, path string, max int64) ([]byte, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, fmt.Errorf("%s: size: %w", path, err)
	}
	if max > 0 && size > max {
		return nil, fmt.Errorf("%s: %d bytes, over %d: %w", path, size, max, ErrTooLarge)
	}
	b := make([]byte, size)
	if n, err := f.ReadAt(b, 0); n < len(b) {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("%s: read: %w", path, err)
	}
	return b, nil
}
