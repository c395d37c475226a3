package consumerstate

import (
	"errors"
	"fmt"

	"github.com/jetwal/jetwal/store"
)

// ErrCorrupt is the engine-wide corruption sentinel. Every decoding or
// recovery failure caused by damaged bytes wraps it, together with the file
// and byte offset involved; test with errors.Is.
var ErrCorrupt = store.ErrCorrupt

// Errors returned by the state machine and the store. They are wrapped with
// context; test with errors.Is.
var (
	// ErrInvalidDelivery: a delivery that the state cannot have produced
	// (a first delivery at or below Delivered.Stream, a redelivery of a
	// message that is not pending, a delivery count of zero).
	ErrInvalidDelivery = fmt.Errorf("consumerstate: invalid delivery: %w", store.ErrInvalidSequence)
	// ErrExists: Create of a consumer that already exists.
	ErrExists = errors.New("consumerstate: consumer already exists")
	// ErrNotFound: Load or Delete of a consumer that does not exist.
	ErrNotFound = errors.New("consumerstate: consumer not found")
	// ErrInvalidName: a consumer name that cannot be a directory name.
	ErrInvalidName = errors.New("consumerstate: invalid consumer name")
	// ErrInvalidConfig: configuration bytes that are not a JSON value.
	ErrInvalidConfig = errors.New("consumerstate: config is not valid JSON")
	// ErrClosed: use of a closed store or a deleted consumer.
	ErrClosed = store.ErrClosed
	// ErrWriteFailed: an earlier write or fsync of this consumer failed; its
	// files are in an unknown state until the store is reopened.
	ErrWriteFailed = store.ErrWriteFailed
)

// corruptf returns an error wrapping ErrCorrupt.
func corruptf(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrCorrupt)
}
