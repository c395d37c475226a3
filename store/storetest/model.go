package storetest

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/subject"
)

// NewModel returns a deliberately naive store.StreamStore with the
// semantics the suite pins down (see the package documentation): a map from
// sequence to message and a linear scan for every question. It is the
// oracle of the randomized tests and passes Run itself. It is slow by
// design; do not use it outside tests.
// It accounts bytes as a memory store does (store.MemRecordSize).
func NewModel(limits store.Limits) store.StreamStore { return newModel(limits) }

// sizeFunc is how a store accounts a message's bytes (store.SizeFunc).
type sizeFunc = func(subject string, hdr, data []byte) uint64

// model is the naive reference store.
type model struct {
	// asyncMu serialises AppendAsync so that done calls run one at a time
	// in sequence order.
	asyncMu sync.Mutex

	mu       sync.Mutex // guards the fields below
	limits   store.Limits
	closed   bool
	msgs     map[uint64]*store.Msg
	order    []uint64 // the keys of msgs, ascending
	first    uint64
	last     uint64
	lastTs   int64
	stopAger chan struct{} // non-nil while the expiry goroutine runs
	onRemove func()        // called by Remove, after closing
	size     sizeFunc      // how bytes are accounted; set at creation
}

func newModel(limits store.Limits) *model { return newModelSized(limits, store.MemRecordSize) }

// newModelSized returns a model accounting bytes with size, to mirror a
// store under test that counts them its own way.
func newModelSized(limits store.Limits, size sizeFunc) *model {
	m := &model{limits: limits, msgs: make(map[uint64]*store.Msg), size: size}
	m.mu.Lock()
	m.startAgerLocked()
	m.mu.Unlock()
	return m
}

func modelErr(err error, format string, args ...any) error {
	return fmt.Errorf("model: %s: %w", fmt.Sprintf(format, args...), err)
}

// sorted returns a copy of the held sequences in order, safe to iterate
// while removing.
func (m *model) sorted() []uint64 { return slices.Clone(m.order) }

// MsgSize is how the model accounts a message's bytes.
func (m *model) MsgSize(subject string, hdr, data []byte) uint64 { return m.size(subject, hdr, data) }

func (m *model) msgSize(msg *store.Msg) uint64 { return m.size(msg.Subject, msg.Header, msg.Data) }

func (m *model) bytes() uint64 {
	var n uint64
	for _, msg := range m.msgs {
		n += m.msgSize(msg)
	}
	return n
}

func (m *model) subjectSeqs(subj string) []uint64 {
	var out []uint64
	for _, seq := range m.order {
		if m.msgs[seq].Subject == subj {
			out = append(out, seq)
		}
	}
	return out
}

// removeLocked deletes seq and fixes first.
func (m *model) removeLocked(seq uint64) bool {
	if _, ok := m.msgs[seq]; !ok {
		return false
	}
	delete(m.msgs, seq)
	i, _ := slices.BinarySearch(m.order, seq)
	m.order = slices.Delete(m.order, i, i+1)
	if len(m.order) == 0 {
		m.first = m.last + 1
	} else {
		m.first = m.order[0]
	}
	return true
}

func (m *model) oldest() uint64 { return m.order[0] }

func (m *model) Append(subj string, hdr, data []byte) (uint64, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.appendLocked(subj, hdr, data)
}

func (m *model) AppendAsync(subj string, hdr, data []byte, done store.AppendDone) error {
	m.asyncMu.Lock()
	defer m.asyncMu.Unlock()
	m.mu.Lock()
	seq, ts, err := m.appendLocked(subj, hdr, data)
	m.mu.Unlock()
	if err != nil {
		return err
	}
	if done != nil {
		done(seq, ts, nil)
	}
	return nil
}

func (m *model) appendLocked(subj string, hdr, data []byte) (uint64, int64, error) {
	l := m.limits
	switch {
	case m.closed:
		return 0, 0, modelErr(store.ErrClosed, "append")
	case !subject.ValidPublish(subj):
		return 0, 0, modelErr(store.ErrInvalidSubject, "append %q", subj)
	case l.MaxMsgSize > 0 && len(hdr)+len(data) > int(l.MaxMsgSize):
		return 0, 0, modelErr(store.ErrMaxMsgSize, "append")
	}
	size := m.size(subj, hdr, data)
	if l.MaxBytes > 0 && size > uint64(l.MaxBytes) {
		return 0, 0, modelErr(store.ErrMaxBytes, "append")
	}
	if l.Discard == store.DiscardNew {
		same := m.subjectSeqs(subj)
		atLimit := l.MaxMsgsPerSubject > 0 && int64(len(same)) >= l.MaxMsgsPerSubject
		if atLimit && l.DiscardNewPerSubject {
			return 0, 0, modelErr(store.ErrMaxMsgsPerSubj, "append")
		}
		if l.MaxMsgs > 0 && !atLimit && int64(len(m.msgs)) >= l.MaxMsgs {
			return 0, 0, modelErr(store.ErrMaxMsgs, "append")
		}
		if l.MaxBytes > 0 {
			after := m.bytes() + size
			if atLimit {
				after -= m.msgSize(m.msgs[same[0]])
			}
			if after > uint64(l.MaxBytes) {
				return 0, 0, modelErr(store.ErrMaxBytes, "append")
			}
		}
	}
	ts := max(time.Now().UnixNano(), m.lastTs)
	seq := m.last + 1
	m.msgs[seq] = &store.Msg{
		Seq: seq, Time: ts, Subject: string([]byte(subj)),
		Header: slices.Clone(hdr), Data: slices.Clone(data),
	}
	m.order = append(m.order, seq)
	if len(m.msgs) == 1 {
		m.first = seq
	}
	m.last, m.lastTs = seq, ts
	if l.MaxMsgsPerSubject > 0 {
		for same := m.subjectSeqs(subj); int64(len(same)) > l.MaxMsgsPerSubject; same = same[1:] {
			m.removeLocked(same[0])
		}
	}
	m.enforceLocked()
	return seq, ts, nil
}

// enforceLocked drops oldest messages over MaxMsgs and MaxBytes.
func (m *model) enforceLocked() {
	l := m.limits
	for l.MaxMsgs > 0 && int64(len(m.msgs)) > l.MaxMsgs {
		m.removeLocked(m.oldest())
	}
	for l.MaxBytes > 0 && m.bytes() > uint64(l.MaxBytes) {
		m.removeLocked(m.oldest())
	}
}

func (m *model) expireLocked() {
	if m.limits.MaxAge <= 0 {
		return
	}
	cutoff := time.Now().UnixNano() - int64(m.limits.MaxAge)
	for _, seq := range m.sorted() {
		if m.msgs[seq].Time > cutoff {
			return
		}
		m.removeLocked(seq)
	}
}

// startAgerLocked starts the expiry goroutine if MaxAge is set. It polls,
// which is fine for a model.
func (m *model) startAgerLocked() {
	if m.limits.MaxAge <= 0 || m.stopAger != nil || m.closed {
		return
	}
	stop := make(chan struct{})
	m.stopAger = stop
	go func() {
		for {
			m.mu.Lock()
			every := min(max(m.limits.MaxAge/8, time.Millisecond), 50*time.Millisecond)
			m.expireLocked()
			m.mu.Unlock()
			select {
			case <-stop:
				return
			case <-time.After(every):
			}
		}
	}()
}

func (m *model) load(seq uint64, out *store.Msg) {
	msg := m.msgs[seq]
	out.Seq, out.Time, out.Subject = msg.Seq, msg.Time, msg.Subject
	out.Header = append(out.Header[:0], msg.Header...)
	out.Data = append(out.Data[:0], msg.Data...)
}

func (m *model) Load(seq uint64, out *store.Msg) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return modelErr(store.ErrClosed, "load")
	}
	if _, ok := m.msgs[seq]; !ok {
		return modelErr(store.ErrNotFound, "load %d", seq)
	}
	m.load(seq, out)
	return nil
}

func checkFilter(filter string) error {
	if filter == "" || subject.ValidFilter(filter) {
		return nil
	}
	return modelErr(store.ErrInvalidSubject, "filter %q", filter)
}

// lockForLoad takes m.mu for a filtered load, failing (without the lock)
// first for an invalid filter, then for a closed store.
func (m *model) lockForLoad(filter string) error {
	if err := checkFilter(filter); err != nil {
		return err
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return modelErr(store.ErrClosed, "load")
	}
	return nil
}

func (m *model) LoadNext(filter string, start uint64, out *store.Msg) error {
	if err := m.lockForLoad(filter); err != nil {
		return err
	}
	defer m.mu.Unlock()
	i, _ := slices.BinarySearch(m.order, start)
	for _, seq := range m.order[i:] {
		if matchFilter(filter, m.msgs[seq].Subject) {
			m.load(seq, out)
			return nil
		}
	}
	return modelErr(store.ErrEOF, "load next")
}

func (m *model) prevLocked(filter string, seq uint64, out *store.Msg) bool {
	s := m.order
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] <= seq && matchFilter(filter, m.msgs[s[i]].Subject) {
			m.load(s[i], out)
			return true
		}
	}
	return false
}

func (m *model) LoadLast(filter string, out *store.Msg) error {
	if err := m.lockForLoad(filter); err != nil {
		return err
	}
	defer m.mu.Unlock()
	if !m.prevLocked(filter, ^uint64(0), out) {
		return modelErr(store.ErrNotFound, "load last")
	}
	return nil
}

func (m *model) LoadPrev(filter string, seq uint64, out *store.Msg) error {
	if err := m.lockForLoad(filter); err != nil {
		return err
	}
	defer m.mu.Unlock()
	if !m.prevLocked(filter, seq, out) {
		return modelErr(store.ErrEOF, "load prev")
	}
	return nil
}

func (m *model) Delete(seq uint64, _ bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return modelErr(store.ErrClosed, "delete")
	}
	if !m.removeLocked(seq) {
		return modelErr(store.ErrNotFound, "delete %d", seq)
	}
	return nil
}

func (m *model) Purge(filter string, upTo, keep uint64) (uint64, error) {
	if err := checkFilter(filter); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return 0, modelErr(store.ErrClosed, "purge")
	}
	var cand []uint64
	for _, seq := range m.sorted() {
		if (upTo == 0 || seq < upTo) && matchFilter(filter, m.msgs[seq].Subject) {
			cand = append(cand, seq)
		}
	}
	if keep >= uint64(len(cand)) {
		return 0, nil
	}
	cand = cand[:uint64(len(cand))-keep]
	for _, seq := range cand {
		m.removeLocked(seq)
	}
	return uint64(len(cand)), nil
}

func (m *model) Compact(seq uint64) (uint64, error) {
	if seq == 0 {
		return 0, modelErr(store.ErrInvalidSequence, "compact 0")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return 0, modelErr(store.ErrClosed, "compact")
	}
	var n uint64
	for _, s := range m.sorted() {
		if s < seq {
			m.removeLocked(s)
			n++
		}
	}
	if len(m.msgs) == 0 && seq > m.last {
		m.first, m.last = seq, seq-1
	}
	return n, nil
}

func (m *model) Truncate(seq uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return modelErr(store.ErrClosed, "truncate")
	}
	for _, s := range m.sorted() {
		if s > seq {
			m.removeLocked(s)
		}
	}
	return nil
}

func (m *model) stateLocked(withDeleted bool) store.State {
	if m.closed {
		return store.State{}
	}
	st := store.State{Msgs: uint64(len(m.msgs)), Bytes: m.bytes(), FirstSeq: m.first, LastSeq: m.last}
	subjects := make(map[string]bool)
	for _, msg := range m.msgs {
		subjects[msg.Subject] = true
	}
	st.NumSubjects = len(subjects)
	if m.lastTs != 0 {
		st.LastTime = time.Unix(0, m.lastTs).UTC()
	}
	if len(m.msgs) == 0 {
		return st
	}
	st.FirstTime = time.Unix(0, m.msgs[m.first].Time).UTC()
	for seq := m.first; seq <= m.last; seq++ {
		if _, ok := m.msgs[seq]; !ok {
			st.NumDeleted++
			if withDeleted && len(st.Deleted) < store.MaxDeletedList {
				st.Deleted = append(st.Deleted, seq)
			}
		}
	}
	return st
}

func (m *model) State() store.State {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stateLocked(false)
}

func (m *model) StateWithDeleted() store.State {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stateLocked(true)
}

func (m *model) SubjectsState(filter string) map[string]store.SubjectState {
	out := make(map[string]store.SubjectState)
	if checkFilter(filter) != nil {
		return out
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return out
	}
	for _, seq := range m.sorted() {
		msg := m.msgs[seq]
		if !matchFilter(filter, msg.Subject) {
			continue
		}
		ss := out[msg.Subject]
		if ss.Msgs == 0 {
			ss.First = seq
		}
		ss.Msgs++
		ss.Last = seq
		out[msg.Subject] = ss
	}
	return out
}

func (m *model) NumPending(start uint64, filter string, lastPerSubject bool) uint64 {
	if checkFilter(filter) != nil {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return 0
	}
	var n uint64
	last := make(map[string]uint64)
	for _, seq := range m.sorted() {
		if subj := m.msgs[seq].Subject; matchFilter(filter, subj) {
			last[subj] = seq
			if seq >= start {
				n++
			}
		}
	}
	if !lastPerSubject {
		return n
	}
	n = 0
	for _, seq := range last {
		if seq >= start {
			n++
		}
	}
	return n
}

func (m *model) SeqForTime(t time.Time) uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return 0
	}
	for _, seq := range m.sorted() {
		if !time.Unix(0, m.msgs[seq].Time).Before(t) {
			return seq
		}
	}
	return m.last + 1
}

func (m *model) UpdateLimits(l store.Limits) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return modelErr(store.ErrClosed, "update limits")
	}
	m.limits = l
	m.applyLimitsLocked()
	return nil
}

// applyLimitsLocked removes what the current limits do not allow.
func (m *model) applyLimitsLocked() {
	l := m.limits
	if l.MaxMsgsPerSubject > 0 {
		for _, seq := range m.sorted() {
			msg, ok := m.msgs[seq]
			if !ok {
				continue
			}
			if same := m.subjectSeqs(msg.Subject); int64(len(same)) > l.MaxMsgsPerSubject {
				m.removeLocked(seq)
			}
		}
	}
	m.enforceLocked()
	m.expireLocked()
	m.startAgerLocked()
}

func (m *model) Sync() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return modelErr(store.ErrClosed, "sync")
	}
	return nil
}

// Close marks the model closed. The messages stay, so a test double of a
// persistent store can hand them to a reopened model.
func (m *model) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return modelErr(store.ErrClosed, "close")
	}
	m.closed = true
	if m.stopAger != nil {
		close(m.stopAger)
		m.stopAger = nil
	}
	return nil
}

func (m *model) Remove() error {
	err := m.Close()
	if err == nil && m.onRemove != nil {
		m.onRemove()
	}
	return err
}
