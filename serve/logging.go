package serve

// The log lines of `jetwal serve`, in nats-server's shape.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jetwal/jetwal/server"
)

// lineHandler is a slog.Handler that writes nats-server style lines:
//
//	[pid] 2006/01/02 15:04:05.000000 [INF] message key=value ...
type lineHandler struct {
	mu     *sync.Mutex
	w      io.Writer
	level  slog.Level
	prefix string // pre-rendered attrs from WithAttrs
	group  string
	pid    int
}

// NewLogHandler returns a handler writing nats-server style lines to w:
// info and above, with debug also debug lines, with trace also the
// protocol trace (server.LevelTrace).
func NewLogHandler(w io.Writer, debug, trace bool) slog.Handler {
	return &lineHandler{mu: &sync.Mutex{}, w: w, level: logLevel(debug, trace), pid: os.Getpid()}
}

func (h *lineHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func levelTag(l slog.Level) string {
	switch {
	case l < slog.LevelDebug:
		return "TRC"
	case l < slog.LevelInfo:
		return "DBG"
	case l < slog.LevelWarn:
		return "INF"
	case l < slog.LevelError:
		return "WRN"
	default:
		return "ERR"
	}
}

func (h *lineHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	t := r.Time
	if t.IsZero() {
		t = time.Now()
	}
	fmt.Fprintf(&b, "[%d] %s [%s] %s", h.pid, t.Format("2006/01/02 15:04:05.000000"), levelTag(r.Level), r.Message)
	b.WriteString(h.prefix)
	r.Attrs(func(a slog.Attr) bool {
		writeAttr(&b, h.group, a)
		return true
	})
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

func writeAttr(b *strings.Builder, group string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	key := a.Key
	if group != "" {
		key = group + "." + key
	}
	if a.Value.Kind() == slog.KindGroup {
		for _, ga := range a.Value.Group() {
			writeAttr(b, key, ga)
		}
		return
	}
	v := a.Value.String()
	if strings.ContainsAny(v, " \t\"=") || v == "" {
		v = fmt.Sprintf("%q", v)
	}
	fmt.Fprintf(b, " %s=%s", key, v)
}

func (h *lineHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	var b strings.Builder
	b.WriteString(h.prefix)
	for _, a := range attrs {
		writeAttr(&b, h.group, a)
	}
	nh := *h
	nh.prefix = b.String()
	return &nh
}

func (h *lineHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	nh := *h
	if nh.group != "" {
		nh.group += "." + name
	} else {
		nh.group = name
	}
	return &nh
}

// logLevel maps the -D/-V flags to a slog level.
func logLevel(debug, trace bool) slog.Level {
	switch {
	case trace:
		return server.LevelTrace
	case debug:
		return slog.LevelDebug
	}
	return slog.LevelInfo
}
