package validate

import (
	"github.com/jetwal/jetwal/jetstream/api"
)

// checkPersistMode applies nats-server 2.12's rules for persist_mode
// "async": file storage only, one replica, no atomic batch publish (all
// 10052). jetwal acknowledges such a stream's messages under its own sync
// policy, which is at least as durable as nats-server's async mode.
func checkPersistMode(cfg *api.StreamConfig) *api.ApiError {
	if cfg.PersistMode != api.AsyncPersist {
		return nil
	}
	switch {
	case cfg.Storage != api.FileStorage:
		return InvalidConfig("async persist mode is only supported on file storage")
	case cfg.Replicas > 1:
		return InvalidConfig("async persist mode is not supported on replicated streams")
	case cfg.AllowAtomicPublish:
		return InvalidConfig("async persist mode is not supported with atomic batch publish")
	}
	return nil
}
