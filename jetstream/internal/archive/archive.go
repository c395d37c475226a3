// Package archive is the format of a stream snapshot (STREAM.SNAPSHOT and
// STREAM.RESTORE): writing one (Writer) and reading one into a Sink
// (Read). It is a leaf of package jetstream, which gathers a stream's
// content into an archive and builds a stream from one.
package archive

import (
	"archive/tar"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"github.com/klauspost/compress/s2"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/store"
)

// The snapshot archive is jetwal's own format, not nats-server's: an S2
// stream (what nats tools expect to decompress) holding a tar of
//
//	snapshot.json          Header: format, the stream's config, its
//	                       creation time and sequence range
//	msgs/000001, …         blocks of messages in sequence order, each
//	                       message a msgRecordHdr then subject, header, data
//	consumers/<n>.json     a consumer's meta.inf (consumerMeta)
//	consumers/<n>.state    its delivery and ack state (consumerstate codec)
//
// Sequences missing between the messages are holes (deleted messages);
// FirstSeq and LastSeq give the holes at either end.
const (
	// Format is the format number this package writes and reads
	// (Header.Format).
	Format            = 1
	archiveHeaderName = "snapshot.json"
	archiveMsgsDir    = "msgs/"
	archiveConsDir    = "consumers/"
	msgBlockSize      = 1 << 20 // bytes of messages per tar entry
	msgRecordHdrSize  = 28      // seq, time, subject, header and data lengths
	maxArchiveEntry   = 64 << 20
)

// Header is snapshot.json: the format, the stream's config, its creation
// time and its sequence range.
type Header struct {
	Format   int              `json:"format"`
	Created  time.Time        `json:"created"`
	Config   api.StreamConfig `json:"config"`
	FirstSeq uint64           `json:"first_seq"`
	LastSeq  uint64           `json:"last_seq"`
	Msgs     uint64           `json:"msgs"`
}

// Consumer is one consumer in an archive.
type Consumer struct {
	Name  string
	Meta  []byte // the consumer's meta.inf (jetstream's consumerMeta) as JSON
	State []byte // its state, consumerstate.Encode
}

// Writer writes an archive: Header first, then every message in sequence
// order (Msg), then every consumer (Consumer), then Close.
type Writer struct {
	zw    *s2.Writer
	tw    *tar.Writer
	block []byte
	n     int // blocks written
	now   time.Time
}

// NewWriter returns a Writer that writes an archive to w.
func NewWriter(w io.Writer) *Writer {
	zw := s2.NewWriter(w)
	return &Writer{zw: zw, tw: tar.NewWriter(zw), now: time.Now().UTC()}
}

func (a *Writer) entry(name string, b []byte) error {
	hdr := &tar.Header{Name: name, Mode: 0o600, Size: int64(len(b)), ModTime: a.now, Typeflag: tar.TypeReg}
	if err := a.tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("archive entry %s: %w", name, err)
	}
	if _, err := a.tw.Write(b); err != nil {
		return fmt.Errorf("archive entry %s: %w", name, err)
	}
	return nil
}

// Header writes snapshot.json.
func (a *Writer) Header(h *Header) error {
	b, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("encode %s: %w", archiveHeaderName, err)
	}
	return a.entry(archiveHeaderName, b)
}

// Msg adds one message, flushing a full block.
func (a *Writer) Msg(m *store.Msg) error {
	var h [msgRecordHdrSize]byte
	binary.LittleEndian.PutUint64(h[0:], m.Seq)
	binary.LittleEndian.PutUint64(h[8:], uint64(m.Time))
	binary.LittleEndian.PutUint32(h[16:], uint32(len(m.Subject)))
	binary.LittleEndian.PutUint32(h[20:], uint32(len(m.Header)))
	binary.LittleEndian.PutUint32(h[24:], uint32(len(m.Data)))
	a.block = append(a.block, h[:]...)
	a.block = append(a.block, m.Subject...)
	a.block = append(a.block, m.Header...)
	a.block = append(a.block, m.Data...)
	if len(a.block) >= msgBlockSize {
		return a.flushBlock()
	}
	return nil
}

func (a *Writer) flushBlock() error {
	if len(a.block) == 0 {
		return nil
	}
	a.n++
	err := a.entry(fmt.Sprintf("%s%06d", archiveMsgsDir, a.n), a.block)
	a.block = a.block[:0]
	return err
}

// Consumer adds one consumer: its meta.inf and its state.
func (a *Writer) Consumer(c *Consumer) error {
	if err := a.entry(archiveConsDir+c.Name+".json", c.Meta); err != nil {
		return err
	}
	return a.entry(archiveConsDir+c.Name+".state", c.State)
}

// Close ends the tar and the S2 stream (it does not close the io.Writer).
func (a *Writer) Close() error {
	if err := a.flushBlock(); err != nil {
		return err
	}
	if err := a.tw.Close(); err != nil {
		return fmt.Errorf("archive end: %w", err)
	}
	if err := a.zw.Close(); err != nil {
		return fmt.Errorf("archive compression end: %w", err)
	}
	return nil
}

// ErrMalformed marks an archive that is not one jetwal wrote, or is cut
// short.
var ErrMalformed = errors.New("malformed snapshot archive")

// Sink receives an archive's content in order: the header first, then
// every message, then every consumer. An error from a method ends Read
// with that error.
type Sink interface {
	Header(h *Header) error
	Msg(m *store.Msg) error
	Consumer(c *Consumer) error
}

// Read decodes an archive from r into sink. A malformed or truncated
// archive gives an error wrapping ErrMalformed.
func Read(r io.Reader, sink Sink) error {
	tr := tar.NewReader(s2.NewReader(r))
	var gotHeader bool
	var last uint64
	metas := map[string][]byte{}
	for {
		th, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		if th.Typeflag != tar.TypeReg || th.Size < 0 || th.Size > maxArchiveEntry {
			return fmt.Errorf("%w: entry %q of type %c and %d bytes", ErrMalformed, th.Name, th.Typeflag, th.Size)
		}
		// Read, not allocated from the header's size: a forged size must
		// not cost memory the data does not back.
		b, err := io.ReadAll(io.LimitReader(tr, th.Size))
		if err == nil && int64(len(b)) != th.Size {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			return fmt.Errorf("%w: entry %q: %v", ErrMalformed, th.Name, err)
		}
		switch {
		case th.Name == archiveHeaderName:
			if gotHeader {
				return fmt.Errorf("%w: two %s entries", ErrMalformed, archiveHeaderName)
			}
			var h Header
			if err := json.Unmarshal(b, &h); err != nil {
				return fmt.Errorf("%w: %s: %v", ErrMalformed, archiveHeaderName, err)
			}
			if h.Format != Format {
				return fmt.Errorf("%w: format %d, this jetwal reads format %d", ErrMalformed, h.Format, Format)
			}
			gotHeader = true
			if err := sink.Header(&h); err != nil {
				return err
			}
		case !gotHeader:
			return fmt.Errorf("%w: entry %q before %s", ErrMalformed, th.Name, archiveHeaderName)
		case strings.HasPrefix(th.Name, archiveMsgsDir):
			if last, err = readMsgBlock(th.Name, b, last, sink); err != nil {
				return err
			}
		case strings.HasPrefix(th.Name, archiveConsDir):
			base := path.Base(th.Name)
			if name, ok := strings.CutSuffix(base, ".json"); ok {
				metas[name] = b
			} else if name, ok := strings.CutSuffix(base, ".state"); ok {
				meta, ok := metas[name]
				if !ok {
					return fmt.Errorf("%w: %s without its .json", ErrMalformed, th.Name)
				}
				delete(metas, name)
				if err := sink.Consumer(&Consumer{Name: name, Meta: meta, State: b}); err != nil {
					return err
				}
			} else {
				return fmt.Errorf("%w: unknown entry %q", ErrMalformed, th.Name)
			}
		default:
			return fmt.Errorf("%w: unknown entry %q", ErrMalformed, th.Name)
		}
	}
	if !gotHeader {
		return fmt.Errorf("%w: no %s", ErrMalformed, archiveHeaderName)
	}
	for name := range metas {
		return fmt.Errorf("%w: consumer %s without its state", ErrMalformed, name)
	}
	return nil
}

// readMsgBlock decodes one block of messages; sequences must ascend past
// last. It returns the last sequence read.
func readMsgBlock(name string, b []byte, last uint64, sink Sink) (uint64, error) {
	var m store.Msg
	for off := 0; off < len(b); {
		if len(b)-off < msgRecordHdrSize {
			return last, fmt.Errorf("%w: %s: record header cut at offset %d", ErrMalformed, name, off)
		}
		h := b[off : off+msgRecordHdrSize]
		seq := binary.LittleEndian.Uint64(h[0:])
		ts := int64(binary.LittleEndian.Uint64(h[8:]))
		ls, lh, ld := binary.LittleEndian.Uint32(h[16:]), binary.LittleEndian.Uint32(h[20:]), binary.LittleEndian.Uint32(h[24:])
		off += msgRecordHdrSize
		total := uint64(ls) + uint64(lh) + uint64(ld)
		if total > uint64(len(b)-off) {
			return last, fmt.Errorf("%w: %s: record of seq %d cut at offset %d", ErrMalformed, name, seq, off)
		}
		if seq <= last {
			return last, fmt.Errorf("%w: %s: seq %d after seq %d", ErrMalformed, name, seq, last)
		}
		m.Seq, m.Time = seq, ts
		m.Subject = string(b[off : off+int(ls)])
		off += int(ls)
		m.Header = b[off : off+int(lh) : off+int(lh)]
		off += int(lh)
		m.Data = b[off : off+int(ld) : off+int(ld)]
		off += int(ld)
		if err := sink.Msg(&m); err != nil {
			return last, err
		}
		last = seq
	}
	return last, nil
}
