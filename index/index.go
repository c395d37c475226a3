package index

import "sync/atomic"

// Index is a store's sequence and subject index together.
type Index struct {
	Seqs Seqs
	Subj *Subjects
	id   uint64
}

// indexes numbers the indexes New makes (Index.ID).
var indexes atomic.Uint64

// New returns an empty index.
func New() *Index { return &Index{Subj: NewSubjects(), id: indexes.Add(1)} }

// ID tells this index from every other the process made: a reader that
// kept a count over one index can tell that the store replaced it.
func (x *Index) ID() uint64 { return x.id }

// Add records message seq with subject at loc.
func (x *Index) Add(seq uint64, loc Loc, subject string) {
	x.Seqs.Add(seq, loc)
	x.Subj.Add(subject, seq)
}

// AddBytes is Add with the subject in a byte slice (recovery scans).
func (x *Index) AddBytes(seq uint64, loc Loc, subject []byte) {
	x.Seqs.Add(seq, loc)
	x.Subj.AddBytes(subject, seq)
}

// Remove deletes message seq of the given subject. It reports whether the
// message was live.
func (x *Index) Remove(seq uint64, subject string) bool {
	if !x.Seqs.Delete(seq) {
		return false
	}
	x.Subj.Remove(subject, seq, x.Seqs.Live)
	return true
}

// MemBytes estimates the index's heap use.
func (x *Index) MemBytes() int { return x.Seqs.MemBytes() + x.Subj.MemBytes() }
