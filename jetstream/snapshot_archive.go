package jetstream

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
//	snapshot.json          archiveHeader: format, the stream's config, its
//	                       creation time and sequence range
//	msgs/000001, …         blocks of messages in sequence order, each
//	                       message a msgRecordHdr then subject, header, data
//	consumers/<n>.json     a consumer's meta.inf (consumerMeta)
//	consumers/<n>.state    its delivery and ack state (consumerstate codec)
//
// Sequences missing between the messages are holes (deleted messages);
// FirstSeq and LastSeq give the holes at either end.
const (
	archiveFormat     = 1
	archiveHeaderName = "snapshot.json"
	archiveMsgsDir    = "msgs/"
	archiveConsDir    = "consumers/"
	msgBlockSize      = 1 << 20 // bytes of messages per tar entry
	msgRecordHdrSize  = 28      // seq, time, subject, header and data lengths
	maxArchiveEntry   = 64 << 20
)

// archiveHeader is snapshot.json.
type archiveHeader struct {
	Format   int              `json:"format"`
	Created  time.Time        `json:"created"`
	Config   api.StreamConfig `json:"config"`
	FirstSeq uint64           `json:"first_seq"`
	LastSeq  uint64           `json:"last_seq"`
	Msgs     uint64           `json:"msgs"`
}

// archiveConsumer is one consumer in an archive.
type archiveConsumer struct {
	name  string
	meta  []byte // consumerMeta as JSON
	state []byte // consumerstate.Encode
}

// archiveWriter writes an archive to w.
type archiveWriter struct {
	zw    *s2.Writer
	tw    *tar.Writer
	block []byte
	n     int // blocks written
	now   time.Time
}

func newArchiveWriter(w io.Writer) *archiveWriter {
	zw := s2.NewWriter(w)
	return &archiveWriter{zw: zw, tw: tar.NewWriter(zw), now: time.Now().UTC()}
}

func (a *archiveWriter) entry(name string, b []byte) error {
	hdr := &tar.Header{Name: name, Mode: 0o600, Size: int64(len(b)), ModTime: a.now, Typeflag: tar.TypeReg}
	if err := a.tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("archive entry %s: %w", name, err)
	}
	if _, err := a.tw.Write(b); err != nil {
		return fmt.Errorf("archive entry %s: %w", name, err)
	}
	return nil
}

func (a *archiveWriter) header(h *archiveHeader) error {
	b, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("encode %s: %w", archiveHeaderName, err)
	}
	return a.entry(archiveHeaderName, b)
}

// msg adds one message, flushing a full block.
func (a *archiveWriter) msg(m *store.Msg) error {
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

func (a *archiveWriter) flushBlock() error {
	if len(a.block) == 0 {
		return nil
	}
	a.n++
	err := a.entry(fmt.Sprintf("%s%06d", archiveMsgsDir, a.n), a.block)
	a.block = a.block[:0]
	return err
}

func (a *archiveWriter) consumer(c *archiveConsumer) error {
	if err := a.entry(archiveConsDir+c.name+".json", c.meta); err != nil {
		return err
	}
	return a.entry(archiveConsDir+c.name+".state", c.state)
}

// close ends the tar and the S2 stream.
func (a *archiveWriter) close() error {
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

// errArchive marks an archive that is not one jetwal wrote, or is cut short.
var errArchive = errors.New("malformed snapshot archive")

// archiveSink receives an archive's content in order: the header first,
// then every message, then every consumer.
type archiveSink interface {
	header(h *archiveHeader) error
	msg(m *store.Msg) error
	consumer(c *archiveConsumer) error
}

// readArchive decodes an archive from r into sink. A malformed or truncated
// archive gives an error wrapping errArchive.
func readArchive(r io.Reader, sink archiveSink) error {
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
			return fmt.Errorf("%w: %v", errArchive, err)
		}
		if th.Typeflag != tar.TypeReg || th.Size < 0 || th.Size > maxArchiveEntry {
			return fmt.Errorf("%w: entry %q of type %c and %d bytes", errArchive, th.Name, th.Typeflag, th.Size)
		}
		// Read, not allocated from the header's size: a forged size must
		// not cost memory the data does not back.
		b, err := io.ReadAll(io.LimitReader(tr, th.Size))
		if err == nil && int64(len(b)) != th.Size {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			return fmt.Errorf("%w: entry %q: %v", errArchive, th.Name, err)
		}
		switch {
		case th.Name == archiveHeaderName:
			if gotHeader {
				return fmt.Errorf("%w: two %s entries", errArchive, archiveHeaderName)
			}
			var h archiveHeader
			if err := json.Unmarshal(b, &h); err != nil {
				return fmt.Errorf("%w: %s: %v", errArchive, archiveHeaderName, err)
			}
			if h.Format != archiveFormat {
				return fmt.Errorf("%w: format %d, this jetwal reads format %d", errArchive, h.Format, archiveFormat)
			}
			gotHeader = true
			if err := sink.header(&h); err != nil {
				return err
			}
		case !gotHeader:
			return fmt.Errorf("%w: entry %q before %s", errArchive, th.Name, archiveHeaderName)
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
					return fmt.Errorf("%w: %s without its .json", errArchive, th.Name)
				}
				delete(metas, name)
				if err := sink.consumer(&archiveConsumer{name: name, meta: meta, state: b}); err != nil {
					return err
				}
			} else {
				return fmt.Errorf("%w: unknown entry %q", errArchive, th.Name)
			}
		default:
			return fmt.Errorf("%w: unknown entry %q", errArchive, th.Name)
		}
	}
	if !gotHeader {
		return fmt.Errorf("%w: no %s", errArchive, archiveHeaderName)
	}
	for name := range metas {
		return fmt.Errorf("%w: consumer %s without its state", errArchive, name)
	}
	return nil
}

// readMsgBlock decodes one block of messages; sequences must ascend past
// last. It returns the last sequence read.
func readMsgBlock(name string, b []byte, last uint64, sink archiveSink) (uint64, error) {
	var m store.Msg
	for off := 0; off < len(b); {
		if len(b)-off < msgRecordHdrSize {
			return last, fmt.Errorf("%w: %s: record header cut at offset %d", errArchive, name, off)
		}
		h := b[off : off+msgRecordHdrSize]
		seq := binary.LittleEndian.Uint64(h[0:])
		ts := int64(binary.LittleEndian.Uint64(h[8:]))
		ls, lh, ld := binary.LittleEndian.Uint32(h[16:]), binary.LittleEndian.Uint32(h[20:]), binary.LittleEndian.Uint32(h[24:])
		off += msgRecordHdrSize
		total := uint64(ls) + uint64(lh) + uint64(ld)
		if total > uint64(len(b)-off) {
			return last, fmt.Errorf("%w: %s: record of seq %d cut at offset %d", errArchive, name, seq, off)
		}
		if seq <= last {
			return last, fmt.Errorf("%w: %s: seq %d after seq %d", errArchive, name, seq, last)
		}
		m.Seq, m.Time = seq, ts
		m.Subject = string(b[off : off+int(ls)])
		off += int(ls)
		m.Header = b[off : off+int(lh) : off+int(lh)]
		off += int(lh)
		m.Data = b[off : off+int(ld) : off+int(ld)]
		off += int(ld)
		if err := sink.msg(&m); err != nil {
			return last, err
		}
		last = seq
	}
	return last, nil
}
