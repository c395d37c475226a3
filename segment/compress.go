package segment

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/jetwal/jetwal/vfs"
	"github.com/klauspost/compress/s2"
)

// Compress rewrites a sealed plain segment as a compressed one
// (<base>.seg.s2) and removes the plain file. The new file is synced and its
// directory entry made durable before the old one is removed, so a crash
// leaves at least one complete copy. It returns the compressed segment; s is
// closed.
func Compress(s *Segment) (*Segment, error) {
	if !s.sealed || s.compressed {
		return nil, fmt.Errorf("segment: compress %s: segment must be sealed and plain", s.path)
	}
	body := s.data[HeaderSize:s.end]
	enc := s2.Encode(nil, body)
	out := append(encodeHeader(s.hdr.base, s.hdr.created, SegFlagCompressed|s.hdr.flags&SegFlagEncrypted), enc...)
	dir := filepath.Dir(s.path)
	final := filepath.Join(dir, FileName(s.hdr.base, true))
	tmp := final + ".tmp"
	if err := writeFileSync(s.fs, tmp, out); err != nil {
		return nil, err
	}
	if err := s.fs.Rename(tmp, final); err != nil {
		return nil, fmt.Errorf("segment: rename %s: %w", tmp, err)
	}
	if err := s.fs.SyncDir(dir); err != nil {
		return nil, fmt.Errorf("segment: sync dir %s: %w", dir, err)
	}
	if err := s.Remove(); err != nil {
		return nil, err
	}
	if err := s.fs.SyncDir(dir); err != nil {
		return nil, fmt.Errorf("segment: sync dir %s: %w", dir, err)
	}
	return OpenKey(s.fs, final, false, s.key)
}

func writeFileSync(fs vfs.FS, path string, b []byte) error {
	f, err := fs.Create(path)
	if err != nil {
		return fmt.Errorf("segment: create %s: %w", path, err)
	}
	if _, err := f.WriteAt(b, 0); err != nil {
		f.Close()
		return fmt.Errorf("segment: write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("segment: sync %s: %w", path, err)
	}
	return f.Close()
}

// decodeCompressed reads and decodes a compressed segment file of the given
// size into header + records, so offsets match the plain layout.
func decodeCompressed(f io.ReaderAt, path string, size int64) ([]byte, error) {
	raw := make([]byte, size)
	if _, err := f.ReadAt(raw, 0); err != nil {
		return nil, fmt.Errorf("segment: read %s: %w", path, err)
	}
	n, err := s2.DecodedLen(raw[HeaderSize:])
	if err != nil {
		return nil, &CorruptError{File: path, Offset: HeaderSize, Reason: "bad S2 block: " + err.Error()}
	}
	if n > 1<<31 {
		return nil, &CorruptError{File: path, Offset: HeaderSize, Reason: fmt.Sprintf("S2 block claims %d bytes", n)}
	}
	out := make([]byte, HeaderSize+n)
	copy(out, raw[:HeaderSize])
	if _, err := s2.Decode(out[HeaderSize:], raw[HeaderSize:]); err != nil {
		return nil, &CorruptError{File: path, Offset: HeaderSize, Reason: "bad S2 block: " + err.Error()}
	}
	return out, nil
}
