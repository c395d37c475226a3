package apiserver

import (
	"log/slog"
	"runtime/debug"
	"sync"

	"github.com/jetwal/jetwal/jetstream/api"
)

// Server is the API of one JetStream: its routing table and the handlers
// that decode a request, call one operation of Ops and encode the reply.
type Server struct {
	ops      Ops
	storeDir string
	log      *slog.Logger

	mu       sync.RWMutex
	handlers map[string]Handler
}

// Config configures a Server.
type Config struct {
	// StoreDir is the store directory, which error replies never show
	// (HidePaths).
	StoreDir string
	// Logger logs the replies that could not be encoded and the handlers
	// that panicked.
	Logger *slog.Logger
	// Clustered registers the operations only a cluster has (ClusterOps).
	Clustered bool
}

// New returns the API server of ops, with this package's handlers
// registered.
func New(ops Ops, cfg Config) *Server {
	s := &Server{ops: ops, storeDir: cfg.StoreDir, log: cfg.Logger, handlers: make(map[string]Handler)}
	s.registerStream()
	s.registerMsg()
	s.registerConsumer()
	s.registerSnapshot()
	s.registerCluster(cfg.Clustered)
	return s
}

// Serve runs one API handler. A panic in it is a bug, but it must cost only
// that request: it is logged with its stack and answered with a 500 error,
// and the queue goes on serving everyone else.
func (s *Server) Serve(h Handler, r *Request) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("JetStream API handler panicked", "subject", r.Subject, "panic", p, "stack", string(debug.Stack()))
			s.RespondError(r, api.TypeError, &api.ApiError{Code: 500, ErrCode: api.ErrStreamGeneral,
				Description: "internal error serving the request"})
		}
	}()
	if s.refuseLevel(r) {
		return
	}
	h.Fn(r)
}
