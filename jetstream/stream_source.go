package jetstream

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/validate"
	"github.com/jetwal/jetwal/natshdr"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/subject/transform"
)

// Mirrors and sources of streams on this server. Each mirror or source of
// a stream is a feed: a goroutine that reads the origin stream's store
// from the next sequence it has not copied, in order, and appends what it
// reads to this stream through the ordinary append path (consumers see
// it; limits apply), without the publish checks (no dedupe, no expected
// headers). An origin's appends wake its feeds; a feed that finds no
// origin stream waits and looks again.
//
//   - A mirror keeps the origin's sequences: a gap in the origin is
//     skipped in the mirror (wal.Store.SkipTo), so message N of the mirror
//     is message N of the origin. It resumes after the mirror's last
//     sequence, so a restart or a crash neither repeats nor loses any.
//   - A source appends under this stream's own sequences and marks each
//     copy with nats-server's Nats-Stream-Source header ("<origin> <seq>
//     <filter> <dest> <subject>"); it resumes after the last copy of its
//     origin found in the stream, so a restart repeats nothing.

const (
	feedIdleWait = 250 * time.Millisecond // re-check an idle or missing origin
	hdrSource    = "Nats-Stream-Source"
)

type feed struct {
	s      *stream
	src    api.StreamSource
	mirror bool
	xfs    []*transform.Transform // subject_transforms, compiled
	filter string                 // what is read from the origin ("" = all)
	key    string                 // filter and destinations, in Nats-Stream-Source
	wake   chan struct{}
	stop   chan struct{}
	done   chan struct{}

	next   atomic.Uint64 // next origin sequence to copy
	active atomic.Int64  // unix ns of the last copy or check
	err    atomic.Pointer[api.ApiError]
}

// feeds are a stream's running mirror and sources.
type feeds struct {
	mu   sync.Mutex
	list []*feed
}

// watchers are the feeds that copy from a stream, woken by its appends.
type watchers struct {
	mu   sync.Mutex
	list []chan struct{}
	n    atomic.Int32
}

func (w *watchers) add(ch chan struct{}) {
	w.mu.Lock()
	w.list = append(w.list, ch)
	w.n.Store(int32(len(w.list)))
	w.mu.Unlock()
}

func (w *watchers) remove(ch chan struct{}) {
	w.mu.Lock()
	for i, c := range w.list {
		if c == ch {
			w.list = append(w.list[:i], w.list[i+1:]...)
			break
		}
	}
	w.n.Store(int32(len(w.list)))
	w.mu.Unlock()
}

// notify wakes the feeds reading this stream; free when there are none.
func (w *watchers) notify() {
	if w.n.Load() == 0 {
		return
	}
	w.mu.Lock()
	for _, c := range w.list {
		select {
		case c <- struct{}{}:
		default:
		}
	}
	w.mu.Unlock()
}

// startFeeds starts the stream's mirror and sources (none for most).
func (s *stream) startFeeds() {
	cfg := s.config()
	mirror, sources, aerr := validate.Sources(&cfg)
	if aerr != nil {
		s.env.log.Error("mirror or sources not started", "stream", s.name, "error", aerr.Description)
		return
	}
	var fs []*feed
	if mirror != nil {
		fs = append(fs, newFeed(s, *mirror, true))
	}
	for _, src := range sources {
		fs = append(fs, newFeed(s, src, false))
	}
	s.srcs.mu.Lock()
	defer s.srcs.mu.Unlock()
	for _, f := range fs {
		f.wake, f.stop, f.done = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
		f.next.Store(f.resumeAt())
		f.active.Store(time.Now().UnixNano())
		s.srcs.list = append(s.srcs.list, f)
		go f.run()
	}
}

func newFeed(s *stream, src api.StreamSource, mirror bool) *feed {
	f := &feed{s: s, src: src, mirror: mirror, filter: src.FilterSubject}
	srcs, dests := orAll(src.FilterSubject), ">"
	if len(src.SubjectTransforms) > 0 {
		var ss, ds []string
		for _, tr := range src.SubjectTransforms {
			if x, err := transform.New(tr.Source, tr.Destination); err == nil { // checked by validate.CheckSources
				f.xfs = append(f.xfs, x)
			}
			ss, ds = append(ss, orAll(tr.Source)), append(ds, orAll(tr.Destination))
		}
		srcs, dests = strings.Join(ss, ","), strings.Join(ds, ",")
		f.filter = ""
		if len(src.SubjectTransforms) == 1 {
			f.filter = src.SubjectTransforms[0].Source
		}
	}
	f.key = srcs + " " + dests
	return f
}

// mapSubject applies the transforms: the subject to store, and false when
// no transform takes it.
func (f *feed) mapSubject(subj string) (string, bool) {
	if len(f.xfs) == 0 {
		return subj, true
	}
	for _, x := range f.xfs {
		if out, err := x.Match(subj); err == nil {
			return out, true
		}
	}
	return "", false
}

// stopFeeds stops them and waits.
func (s *stream) stopFeeds() {
	s.srcs.mu.Lock()
	fs := s.srcs.list
	s.srcs.list = nil
	s.srcs.mu.Unlock()
	for _, f := range fs {
		close(f.stop)
	}
	for _, f := range fs {
		<-f.done
	}
}

// resumeAt is the first origin sequence the feed has not copied.
func (f *feed) resumeAt() uint64 {
	st := f.s.store.State()
	if f.mirror && st.LastSeq > 0 {
		return st.LastSeq + 1
	}
	if !f.mirror {
		if seq, ok := f.lastCopied(); ok {
			return seq + 1
		}
	}
	return 0 // from the configured start (resolved when the origin exists)
}

// lastCopied finds the origin sequence of the newest copy from this feed's
// origin in the stream.
func (f *feed) lastCopied() (uint64, bool) {
	var m store.Msg
	for seq := f.s.store.State().LastSeq; seq > 0; seq = m.Seq - 1 {
		if err := f.s.store.LoadPrev("", seq, &m); err != nil {
			return 0, false
		}
		if origin, oseq, key, ok := parseSourceHeader(headerValue(m.Header, hdrSource)); ok &&
			origin == f.src.Name && key == f.key {
			return oseq, true
		}
	}
	return 0, false
}

func orAll(filter string) string {
	if filter == "" {
		return ">"
	}
	return filter
}

// parseSourceHeader reads "<origin> <seq> <filter> <dest> <subject>"; key
// is "<filter> <dest>".
func parseSourceHeader(v []byte) (origin string, seq uint64, key string, ok bool) {
	parts := strings.Fields(string(v))
	if len(parts) < 4 {
		return "", 0, "", false
	}
	n, err := strconv.ParseUint(parts[1], 10, 64)
	if err != nil {
		return "", 0, "", false
	}
	return parts[0], n, parts[2] + " " + parts[3], true
}

func (f *feed) run() {
	defer close(f.done)
	var watched *stream
	defer func() {
		if watched != nil {
			watched.watch.remove(f.wake)
		}
	}()
	timer := time.NewTimer(feedIdleWait)
	defer timer.Stop()
	for {
		origin := f.s.js.lookup(f.src.Name)
		if origin != watched {
			if watched != nil {
				watched.watch.remove(f.wake)
			}
			if origin != nil {
				origin.watch.add(f.wake)
			}
			watched = origin
		}
		progressed := false
		if origin == nil && f.s.js.clustered() {
			// Served by another server of the cluster (cluster_source.go).
			var found bool
			if progressed, found = f.copyRemote(); !found {
				f.err.Store(api.Errorf(api.ErrStreamNotFound, "stream not found"))
			}
		} else if origin == nil {
			f.err.Store(api.Errorf(api.ErrStreamNotFound, "stream not found"))
		} else if c, aerr := f.durable(origin); aerr != nil {
			f.err.Store(aerr)
		} else {
			f.err.Store(nil)
			progressed = f.copyFrom(origin, c)
		}
		f.active.Store(time.Now().UnixNano())
		if progressed {
			select {
			case <-f.stop:
				return
			default:
				continue
			}
		}
		timer.Reset(feedIdleWait)
		select {
		case <-f.stop:
			return
		case <-f.wake:
		case <-timer.C:
		}
	}
}

// copyBatch bounds the messages copied before the feed looks at stop again.
const copyBatch = 256

// copyFrom copies what origin has past the feed's position; it reports
// whether it copied anything. c is the origin's consumer of a durable
// source (nil for most): it selects what is copied and where a new feed
// starts, and follows the copies as its cursor.
func (f *feed) copyFrom(origin *stream, c *consumer) bool {
	next := f.next.Load()
	if next == 0 {
		next = f.startSeq(origin, c)
		f.next.Store(next)
	}
	var m store.Msg
	n := 0
	for ; n < copyBatch; n++ {
		err := origin.store.LoadNext(f.filter, next, &m)
		if errors.Is(err, store.ErrEOF) {
			break
		}
		if err != nil {
			f.err.Store(api.Errorf(api.ErrStreamGeneral, "reading %s at %d: %v", f.src.Name, next, err))
			break
		}
		if c == nil || c.takes(m.Subject) {
			if aerr := f.store(&m); aerr != nil {
				f.err.Store(aerr)
				break
			}
		}
		next = m.Seq + 1
		f.next.Store(next)
	}
	if c != nil && n > 0 {
		c.followCopies(next)
	}
	return n > 0
}

// startSeq is where a feed with no copies yet starts in origin: after a
// durable source's consumer's ack floor, else at the configured start.
func (f *feed) startSeq(origin *stream, c *consumer) uint64 {
	if c != nil {
		return c.resumeSeq()
	}
	switch {
	case f.src.OptStartSeq > 0:
		return f.src.OptStartSeq
	case f.src.OptStartTime != nil:
		return origin.store.SeqForTime(*f.src.OptStartTime)
	}
	return 1
}

// store appends one origin message to the stream.
func (f *feed) store(m *store.Msg) *api.ApiError {
	s := f.s
	subj, ok := f.mapSubject(m.Subject)
	if !ok {
		return nil // no transform takes it (several transforms read everything)
	}
	hdr := m.Header
	if f.mirror {
		if aerr := s.skipTo(m.Seq); aerr != nil {
			return aerr
		}
	} else {
		hdr = natshdr.End(natshdr.AppendString(natshdr.Reopen(nil, hdr), hdrSource,
			fmt.Sprintf("%s %d %s %s", f.src.Name, m.Seq, f.key, m.Subject)))
	}
	res := s.appendMsg(&server.Msg{Subject: subj, Header: hdr, Data: m.Data}, &pubHeaders{}, "", 0, 0, republishTarget{}, nil)
	if res.aerr != nil {
		return res.aerr
	}
	s.finishAppend(&res)
	return nil
}

// skipTo makes seq the mirror's next sequence, over a gap in its origin.
func (s *stream) skipTo(seq uint64) *api.ApiError {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastSeq+1 >= seq {
		return nil
	}
	sk, ok := s.store.(interface{ SkipTo(uint64) error })
	if !ok {
		return api.Errorf(api.ErrStreamGeneral, "this stream's store cannot skip sequences")
	}
	if err := sk.SkipTo(seq); err != nil {
		return api.Errorf(api.ErrStreamGeneral, "skipping to sequence %d: %v", seq, err)
	}
	s.lastSeq = seq - 1
	return nil
}

// sourceInfos reports the stream's mirror and sources for stream info.
func (s *stream) sourceInfos() (mirror *api.StreamSourceInfo, sources []*api.StreamSourceInfo) {
	s.srcs.mu.Lock()
	fs := append([]*feed(nil), s.srcs.list...)
	s.srcs.mu.Unlock()
	for _, f := range fs {
		si := &api.StreamSourceInfo{Name: f.src.Name, FilterSubject: f.src.FilterSubject, SubjectTransforms: f.src.SubjectTransforms, External: f.src.External,
			Active: max(time.Since(time.Unix(0, f.active.Load())), 0), Error: f.err.Load()}
		if origin := s.js.lookup(f.src.Name); origin != nil {
			last := origin.store.State().LastSeq
			if next := max(f.next.Load(), 1); last+1 > next {
				si.Lag = last + 1 - next
			}
		}
		if f.mirror {
			mirror = si
		} else {
			sources = append(sources, si)
		}
	}
	return mirror, sources
}
