package transform

import (
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/jetwal/jetwal/subject"
)

// Match transforms a literal subject. It returns ErrBadSubject if subj is
// not a valid literal subject and ErrNoMatch if the source does not match
// it; an identity transform ('>' to '>') returns every subject unchanged.
func (t *Transform) Match(subj string) (string, error) {
	if t.identity {
		return subj, nil
	}
	if !subject.ValidLiteral(subj) {
		return "", ErrBadSubject
	}
	if t.src != ">" && !subject.Match(t.src, subj) {
		return "", ErrNoMatch
	}
	return t.apply(strings.Split(subj, ".")), nil
}

// apply builds the destination from the tokens of a matching subject.
func (t *Transform) apply(toks []string) string {
	var b strings.Builder
	b.Grow(len(t.dest) + 16)
	last := len(t.ops) - 1
	for i, o := range t.ops {
		if o.kind == literal && o.lit == ">" {
			break // the tail is written below
		}
		o.write(&b, toks)
		if i < last {
			b.WriteByte('.')
		}
	}
	if t.tail {
		for i := t.srcToks - 1; i < len(toks); i++ {
			b.WriteString(toks[i])
			if i < len(toks)-1 {
				b.WriteByte('.')
			}
		}
	}
	return b.String()
}

// write appends the output of one destination token.
func (o *op) write(b *strings.Builder, toks []string) {
	// tok is the source token a one-token function reads.
	tok := ""
	if len(o.pos) > 0 && o.pos[0] < len(toks) {
		tok = toks[o.pos[0]]
	}
	switch o.kind {
	case literal:
		b.WriteString(o.lit)
	case wildcard:
		b.WriteString(tok)
	case partition:
		h := fnv.New32a()
		if len(o.pos) > 0 {
			for _, p := range o.pos {
				if p < len(toks) {
					h.Write([]byte(toks[p]))
				}
			}
		} else {
			h.Write([]byte(strings.Join(toks, ".")))
		}
		if o.n == 0 {
			b.WriteByte('0')
			return
		}
		b.WriteString(strconv.FormatUint(uint64(h.Sum32()%uint32(int32(o.n))), 10))
	case random:
		if o.n == 0 {
			b.WriteByte('0')
			return
		}
		b.WriteString(strconv.Itoa(int(rand.Int32()) % o.n))
	case splitFromLeft, splitFromRight:
		at := o.n
		if o.kind == splitFromRight {
			at = len(tok) - o.n
		}
		if o.n <= 0 || o.n >= len(tok) {
			b.WriteString(tok)
			return
		}
		b.WriteString(tok[:at])
		b.WriteByte('.')
		b.WriteString(tok[at:])
	case sliceFromLeft:
		if o.n <= 0 || o.n >= len(tok) {
			b.WriteString(tok)
			return
		}
		for i := 0; i < len(tok); i += o.n {
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(tok[i:min(i+o.n, len(tok))])
		}
	case sliceFromRight:
		if o.n <= 0 || o.n >= len(tok) {
			b.WriteString(tok)
			return
		}
		i := len(tok) % o.n
		if i > 0 {
			b.WriteString(tok[:i])
			b.WriteByte('.')
		}
		for ; i < len(tok); i += o.n {
			b.WriteString(tok[i : i+o.n])
			if i+o.n < len(tok) {
				b.WriteByte('.')
			}
		}
	case split:
		parts := strings.Split(tok, o.sep)
		for j, p := range parts {
			b.WriteString(p)
			// A separator between two non-empty parts only, never first.
			if j < len(parts)-1 && parts[j+1] != "" && !(j == 0 && p == "") {
				b.WriteByte('.')
			}
		}
	case left:
		if o.n <= 0 || o.n >= len(tok) {
			b.WriteString(tok)
			return
		}
		b.WriteString(tok[:o.n])
	case right:
		if o.n <= 0 || o.n >= len(tok) {
			b.WriteString(tok)
			return
		}
		b.WriteString(tok[len(tok)-o.n:])
	}
}
