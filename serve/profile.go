package serve

import (
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"time"
)

// startProfiler serves Go's profiles (/debug/pprof/) on 127.0.0.1:port,
// as nats-server's --profile does, for looking at a running server. It is
// loopback only: profiles show memory contents.
func startProfiler(port int, log *slog.Logger) (*http.Server, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Info("Profiling on http://" + ln.Addr().String() + "/debug/pprof/")
	go func() { _ = srv.Serve(ln) }()
	return srv, nil
}
