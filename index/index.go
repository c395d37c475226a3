package index

// Index is a store's sequence and subject index together.
type Index struct {
	Seqs Seqs
	Subj *Subjects
}

// New returns an empty index.
func New() *Index { return &Index{Subj: NewSubjects()} }

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
