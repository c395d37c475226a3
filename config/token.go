package config

import (
	"fmt"
	"regexp"
	"strconv"
)

// token is the interface of the values nats-server's conf parser returns
// in pedantic mode: the value with its position.
type token interface {
	Value() any
	Line() int
	Position() int
	SourceFile() string
	IsUsedVariable() bool
}

// pos is a position in a configuration file.
type pos struct {
	file      string
	line, col int
}

func (p pos) String() string {
	if p.line == 0 {
		return p.file
	}
	if p.col == 0 {
		return p.file + ":" + strconv.Itoa(p.line)
	}
	return p.file + ":" + strconv.Itoa(p.line) + ":" + strconv.Itoa(p.col)
}

// Error is a configuration error with its position.
type Error struct {
	File      string
	Line, Col int // 0 when unknown
	Reason    string
}

func (e *Error) Error() string {
	return pos{e.File, e.Line, e.Col}.String() + ": " + e.Reason
}

// Warning is a setting that was ignored, with its position.
type Warning struct {
	File      string
	Line, Col int
	Message   string
}

func (w Warning) String() string {
	return pos{w.File, w.Line, w.Col}.String() + ": " + w.Message
}

// value is one parsed value with where it came from.
type value struct {
	v   any
	pos pos
}

// unwrap separates a parsed value from its token; fallback is the
// position used when the value carries none (elements of arrays).
func unwrap(v any, fallback pos) value {
	if t, ok := v.(token); ok {
		p := pos{file: t.SourceFile(), line: t.Line(), col: t.Position()}
		if p.file == "" {
			p.file = fallback.file
		}
		return value{v: t.Value(), pos: p}
	}
	return value{v: v, pos: fallback}
}

func (v value) errorf(format string, args ...any) error {
	return &Error{File: v.pos.file, Line: v.pos.line, Col: v.pos.col, Reason: fmt.Sprintf(format, args...)}
}

// parseErrLine finds the line number in the conf parser's own errors
// ("Parse error on line 3: ...").
var parseErrLine = regexp.MustCompile(`on line (\d+)`)

// parseError turns an error of the conf parser into an *Error.
func parseError(file string, err error) error {
	e := &Error{File: file, Reason: err.Error()}
	if m := parseErrLine.FindStringSubmatch(e.Reason); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
	}
	return e
}
