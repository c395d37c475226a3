// Package natshdr builds and reads NATS header blocks, the one place the
// server and the JetStream layer spell them:
//
//	NATS/1.0[ <status>[ <description>]]\r\n
//	<Name>: <value>\r\n        (zero or more)
//	\r\n
//
// The functions append to a caller's buffer and allocate nothing else, so
// hot paths (status messages, heartbeats, direct gets) can reuse buffers.
package natshdr

import (
	"bytes"
	"strconv"
)

const (
	version = "NATS/1.0"
	crlf    = "\r\n"
)

// AppendStart appends the first line: the version, and the status code and
// description when code is not 0.
func AppendStart(dst []byte, code int, desc string) []byte {
	dst = append(dst, version...)
	if code != 0 {
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, int64(code), 10)
		if desc != "" {
			dst = append(dst, ' ')
			dst = append(dst, desc...)
		}
	}
	return append(dst, crlf...)
}

// AppendStatusLine appends a first line whose status text is given whole,
// as "409 Consumer Deleted" or "100 Idle Heartbeat".
func AppendStatusLine(dst []byte, status string) []byte {
	dst = append(dst, version...)
	dst = append(dst, ' ')
	dst = append(dst, status...)
	return append(dst, crlf...)
}

// AppendField appends "name: value\r\n".
func AppendField(dst []byte, name string, value []byte) []byte {
	dst = append(dst, name...)
	dst = append(dst, ": "...)
	dst = append(dst, value...)
	return append(dst, crlf...)
}

// AppendString is AppendField for a string value.
func AppendString(dst []byte, name, value string) []byte {
	dst = append(dst, name...)
	dst = append(dst, ": "...)
	dst = append(dst, value...)
	return append(dst, crlf...)
}

// AppendInt appends "name: <decimal>\r\n".
func AppendInt(dst []byte, name string, v int64) []byte {
	dst = append(dst, name...)
	dst = append(dst, ": "...)
	dst = strconv.AppendInt(dst, v, 10)
	return append(dst, crlf...)
}

// AppendUint appends "name: <decimal>\r\n".
func AppendUint(dst []byte, name string, v uint64) []byte {
	dst = append(dst, name...)
	dst = append(dst, ": "...)
	dst = strconv.AppendUint(dst, v, 10)
	return append(dst, crlf...)
}

// End appends the blank line that ends the block.
func End(dst []byte) []byte { return append(dst, crlf...) }

// Status returns a complete status-only block, e.g.
// "NATS/1.0 404 Message Not Found\r\n\r\n".
func Status(code int, desc string) []byte {
	return End(AppendStart(make([]byte, 0, 16+len(desc)), code, desc))
}

// Reopen appends the lines of a complete block (starting "NATS/1.0",
// ending with the blank line) without its final blank line, ready for more
// fields and End; anything else gives a plain first line.
func Reopen(dst, hdr []byte) []byte {
	const end = crlf + crlf
	if bytes.HasPrefix(hdr, []byte(version)) && len(hdr) >= len(version)+len(end) && string(hdr[len(hdr)-len(end):]) == end {
		return append(dst, hdr[:len(hdr)-len(crlf)]...)
	}
	return AppendStart(dst, 0, "")
}

// Fields calls fn for each line of a header block after its status line,
// in order, until the blank line that ends the block (or a line without
// CRLF) or until fn returns false. name is the text before the first colon
// (nil for a line without one), value the rest trimmed of spaces, line the
// whole line with its CRLF.
func Fields(hdr []byte, fn func(name, value, line []byte) bool) {
	i := bytes.Index(hdr, []byte(crlf))
	if i < 0 {
		return
	}
	for rest := hdr[i+2:]; len(rest) > 0; {
		j := bytes.Index(rest, []byte(crlf))
		if j <= 0 {
			return
		}
		line := rest[:j+2]
		rest = rest[j+2:]
		var name, value []byte
		if c := bytes.IndexByte(line[:j], ':'); c > 0 {
			name, value = line[:c], bytes.TrimSpace(line[c+1:j])
		}
		if !fn(name, value, line) {
			return
		}
	}
}

// Get returns the value of the first field called name (compared without
// regard to ASCII case), trimmed of spaces, or nil.
func Get(hdr []byte, name string) (value []byte) {
	Fields(hdr, func(n, v, _ []byte) bool {
		if n != nil && equalFold(n, name) {
			value = v
			return false
		}
		return true
	})
	return value
}

// Lookup is Get that also tells a field present with an empty value from
// an absent one; the field name is compared trimmed of spaces.
func Lookup(hdr []byte, name string) (value []byte, present bool) {
	Fields(hdr, func(n, v, _ []byte) bool {
		if n != nil && equalFold(bytes.TrimSpace(n), name) {
			value, present = v, true
			return false
		}
		return true
	})
	return value, present
}

// equalFold compares ASCII without regard to case, without allocating.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
