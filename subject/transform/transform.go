// Package transform maps subjects from a source pattern to a destination
// pattern, the way nats-server's subject transforms do (stream
// subject_transform and republish, subject mappings).
//
// A source is a filter: literal tokens and the wildcards '*' and '>'. A
// destination is a subject whose tokens may be:
//
//	literal                 copied as it is
//	>                       the source's '>' tokens (only if the source has '>')
//	$N, {{wildcard(N)}}     the token matched by the source's N-th '*'
//	{{partition(P,N...)}}   FNV-1a hash of the named '*' tokens (all tokens
//	                        when none are named) modulo P
//	{{splitFromLeft(N,I)}}  token N split in two after I bytes
//	{{splitFromRight(N,I)}} token N split in two I bytes from its end
//	{{sliceFromLeft(N,S)}}  token N cut in S-byte tokens from the left
//	{{sliceFromRight(N,S)}} token N cut in S-byte tokens from the right
//	{{split(N,D)}}          token N split at every D
//	{{left(N,S)}}           the first S bytes of token N
//	{{right(N,S)}}          the last S bytes of token N
//	{{random(P)}}           a random number below P
//
// Function names are matched without regard to case. A source without
// wildcards may only use partition and random.
package transform

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Errors. The texts are nats-server's, since clients see them in API
// errors; test with errors.Is.
var (
	ErrBadSubject         = errors.New("invalid subject")
	ErrNoMatch            = errors.New("no matching transforms available")
	ErrInvalidDestination = errors.New("invalid mapping destination")

	ErrDestinationSubject = fmt.Errorf("%w: invalid transform", ErrInvalidDestination)
	ErrUnknownFunction    = fmt.Errorf("%w: unknown function", ErrInvalidDestination)
	ErrIndexOutOfRange    = fmt.Errorf("%w: wildcard index out of range", ErrInvalidDestination)
	ErrNotEnoughArgs      = fmt.Errorf("%w: not enough arguments passed to the function", ErrInvalidDestination)
	ErrInvalidArg         = fmt.Errorf("%w: function argument is invalid or in the wrong format", ErrInvalidDestination)
	ErrTooManyArgs        = fmt.Errorf("%w: too many arguments passed to the function", ErrInvalidDestination)
)

// tokenError names the destination token an error is about.
type tokenError struct {
	token string
	err   error
}

func (e *tokenError) Error() string {
	if e.token == "" {
		return e.err.Error()
	}
	return e.err.Error() + " in " + e.token
}

func (e *tokenError) Unwrap() error { return e.err }

func tokErr(token string, err error) error { return &tokenError{token, err} }

// kind is what a destination token does.
type kind uint8

const (
	literal kind = iota
	wildcard
	partition
	splitFromLeft
	splitFromRight
	sliceFromLeft
	sliceFromRight
	split
	left
	right
	random
)

// functions maps lower-case function names to their kind.
var functions = map[string]kind{
	"wildcard":       wildcard,
	"partition":      partition,
	"splitfromleft":  splitFromLeft,
	"splitfromright": splitFromRight,
	"slicefromleft":  sliceFromLeft,
	"slicefromright": sliceFromRight,
	"split":          split,
	"left":           left,
	"right":          right,
	"random":         random,
}

// op is one destination token, compiled.
type op struct {
	kind kind
	lit  string // literal: the token
	pos  []int  // positions in the subject of the source tokens it reads
	n    int    // partitions, split position, slice size, random bound
	sep  string // split: the delimiter
}

// Transform is a compiled source → destination mapping. It is immutable
// and safe for concurrent use.
type Transform struct {
	src, dest string
	srcToks   int  // tokens in the source, '>' included
	tail      bool // the destination ends in '>'
	identity  bool // '>' to '>': subjects pass unchanged
	ops       []op
}

// Source returns the source pattern; Destination the destination.
func (t *Transform) Source() string      { return t.src }
func (t *Transform) Destination() string { return t.dest }

// New compiles a transform. An empty source means ">". An empty
// destination means no transform: New returns nil and no error.
func New(src, dest string) (*Transform, error) {
	if dest == "" {
		return nil, nil
	}
	if src == "" {
		src = ">"
	}
	stoks, sOK := tokens(src)
	dtoks, dOK := tokens(dest)
	if !sOK || !dOK {
		return nil, ErrBadSubject
	}
	// wcPos[k] is the position of the source's (k+1)-th '*'.
	var wcPos []int
	srcTail := false
	for i, tok := range stoks {
		switch tok {
		case "*":
			wcPos = append(wcPos, i)
		case ">":
			srcTail = true
		}
	}
	destTail := false
	for _, tok := range dtoks {
		switch tok {
		case "*":
			return nil, ErrBadSubject
		case ">":
			destTail = true
		}
	}
	if srcTail != destTail {
		return nil, ErrBadSubject
	}
	t := &Transform{
		src: src, dest: dest,
		srcToks:  len(stoks),
		tail:     destTail,
		identity: src == ">" && dest == ">",
		ops:      make([]op, 0, len(dtoks)),
	}
	hasWildcards := len(wcPos) > 0 || srcTail
	for _, tok := range dtoks {
		o, idx, err := parseToken(tok)
		if err != nil {
			return nil, err
		}
		switch {
		case o.kind == literal || o.kind == random:
		case !hasWildcards:
			if o.kind != partition {
				return nil, tokErr(tok, ErrIndexOutOfRange)
			}
			idx = nil // without wildcards a partition hashes the whole subject
		default:
			for _, k := range idx {
				if k > len(wcPos) {
					return nil, tokErr(fmt.Sprintf("%s: [%d]", tok, k), ErrIndexOutOfRange)
				}
				p := 0 // nats-server reads an index below 1 as the first token
				if k >= 1 {
					p = wcPos[k-1]
				}
				o.pos = append(o.pos, p)
			}
		}
		t.ops = append(t.ops, o)
	}
	return t, nil
}

// Validate checks a destination as nats-server checks a configured
// mapping: every token well formed, every {{...}} a known function, no
// white space, then that the transform compiles.
func Validate(src, dest string) error {
	if dest == "" {
		return nil
	}
	afterTail := false
	for _, tok := range strings.Split(dest, ".") {
		if tok == "" || afterTail {
			return tokErr(tok, ErrDestinationSubject)
		}
		if isFunction(tok) {
			if _, ok := functions[strings.ToLower(funcName(tok))]; !ok {
				return tokErr(tok, ErrUnknownFunction)
			}
			continue
		}
		if tok == ">" {
			afterTail = true
		} else if strings.ContainsAny(tok, "\t\n\f\r ") {
			return ErrDestinationSubject
		}
	}
	_, err := New(src, dest)
	return err
}

// tokens splits a pattern and checks its form: no empty token, nothing
// after '>'.
func tokens(s string) ([]string, bool) {
	if s == "" {
		return nil, false
	}
	toks := strings.Split(s, ".")
	for i, tok := range toks {
		if tok == "" || (tok == ">" && i != len(toks)-1) {
			return nil, false
		}
	}
	return toks, true
}

// isFunction reports whether a destination token has the {{...}} form.
func isFunction(tok string) bool {
	return len(tok) > 4 && strings.HasPrefix(tok, "{{") && strings.HasSuffix(tok, "}}")
}

// funcName returns the name of a {{name(args)}} token ("" without '(').
func funcName(tok string) string {
	inner := strings.TrimSpace(tok[2 : len(tok)-2])
	name, _, ok := strings.Cut(inner, "(")
	if !ok {
		return ""
	}
	return strings.TrimSpace(name)
}

// funcArgs returns the comma-separated arguments of a {{name(args)}} token;
// ok is false if the parentheses are missing.
func funcArgs(tok string) (args []string, ok bool) {
	inner := strings.TrimSpace(tok[2 : len(tok)-2])
	open, close := strings.IndexByte(inner, '('), strings.LastIndexByte(inner, ')')
	if open < 0 || close < open || strings.TrimSpace(inner[close+1:]) != "" {
		return nil, false
	}
	for _, a := range strings.Split(inner[open+1:close], ",") {
		args = append(args, strings.TrimLeft(a, " \t\n\f\r\v"))
	}
	return args, true
}

// parseToken compiles one destination token; idx are the 1-based wildcard
// numbers it reads.
func parseToken(tok string) (o op, idx []int, err error) {
	if len(tok) > 1 && tok[0] == '$' {
		n, err := strconv.Atoi(tok[1:])
		if err != nil {
			return op{kind: literal, lit: tok}, nil, nil // "$x" is a literal
		}
		return op{kind: wildcard}, []int{n}, nil
	}
	if !isFunction(tok) {
		return op{kind: literal, lit: tok}, nil, nil
	}
	k, known := functions[strings.ToLower(funcName(tok))]
	args, ok := funcArgs(tok)
	if !known || !ok {
		return o, nil, tokErr(tok, ErrUnknownFunction)
	}
	o.kind = k
	num := func(s string) (int, error) {
		v, err := strconv.Atoi(strings.Trim(s, " "))
		if err != nil || v > math.MaxInt32 || v < math.MinInt32 {
			return 0, tokErr(tok, ErrInvalidArg)
		}
		return v, nil
	}
	switch k {
	case wildcard:
		if len(args) == 1 && args[0] == "" {
			return o, nil, tokErr(tok, ErrNotEnoughArgs)
		}
		if len(args) > 1 {
			return o, nil, tokErr(tok, ErrTooManyArgs)
		}
		n, err := num(args[0])
		return o, []int{n}, err
	case partition:
		if o.n, err = num(args[0]); err != nil {
			return o, nil, err
		}
		for _, a := range args[1:] {
			n, err := num(a)
			if err != nil {
				return o, nil, err
			}
			idx = append(idx, n)
		}
		return o, idx, nil
	case random:
		if len(args) != 1 {
			return o, nil, tokErr(tok, ErrNotEnoughArgs)
		}
		o.n, err = num(args[0])
		return o, nil, err
	}
	// The rest take a wildcard number and one more argument.
	if len(args) < 2 {
		return o, nil, tokErr(tok, ErrNotEnoughArgs)
	}
	if len(args) > 2 {
		return o, nil, tokErr(tok, ErrTooManyArgs)
	}
	n, err := num(args[0])
	if err != nil {
		return o, nil, err
	}
	if k == split {
		if strings.ContainsAny(args[1], " .") {
			return o, nil, tokErr(tok, ErrInvalidArg)
		}
		o.sep = args[1]
		return o, []int{n}, nil
	}
	if o.n, err = num(args[1]); err != nil {
		return o, nil, err
	}
	return o, []int{n}, nil
}
