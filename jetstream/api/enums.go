package api

import (
	"encoding/json"
	"errors"
	"fmt"
)

// RetentionPolicy says when a stream may drop a message.
type RetentionPolicy int

const (
	// LimitsRetention keeps messages until a limit removes them.
	LimitsRetention RetentionPolicy = iota
	// InterestRetention keeps messages while a consumer still needs them.
	InterestRetention
	// WorkQueueRetention removes a message once a consumer acknowledged it.
	WorkQueueRetention
)

var retentionNames = []string{"limits", "interest", "workqueue"}

func (r RetentionPolicy) String() string { return enumName(retentionNames, int(r)) }

// MarshalJSON writes the policy as its nats-server string.
func (r RetentionPolicy) MarshalJSON() ([]byte, error) {
	return marshalEnum("retention", retentionNames, int(r))
}

// UnmarshalJSON accepts "limits", "interest" and "workqueue".
func (r *RetentionPolicy) UnmarshalJSON(b []byte) error {
	v, err := unmarshalEnum("retention", retentionNames, b)
	*r = RetentionPolicy(v)
	return err
}

// DiscardPolicy says what a full stream does with a new message.
type DiscardPolicy int

const (
	// DiscardOld removes the oldest messages to make room.
	DiscardOld DiscardPolicy = iota
	// DiscardNew refuses the new message.
	DiscardNew
)

var discardNames = []string{"old", "new"}

func (d DiscardPolicy) String() string { return enumName(discardNames, int(d)) }

// MarshalJSON writes "old" or "new".
func (d DiscardPolicy) MarshalJSON() ([]byte, error) {
	return marshalEnum("discard", discardNames, int(d))
}

// UnmarshalJSON accepts "old" and "new".
func (d *DiscardPolicy) UnmarshalJSON(b []byte) error {
	v, err := unmarshalEnum("discard", discardNames, b)
	*d = DiscardPolicy(v)
	return err
}

// StorageType is where a stream keeps its messages. The zero value means
// "not given" in a request and becomes FileStorage when defaults apply.
type StorageType int

const (
	// StorageUnset is a request that did not name a storage type.
	StorageUnset StorageType = iota
	// FileStorage keeps messages in the write-ahead log on disk.
	FileStorage
	// MemoryStorage keeps messages in memory only; they do not survive a restart.
	MemoryStorage
)

var storageNames = []string{"", "file", "memory"}

func (s StorageType) String() string { return enumName(storageNames, int(s)) }

// MarshalJSON writes "file" or "memory".
func (s StorageType) MarshalJSON() ([]byte, error) {
	if s == StorageUnset {
		return []byte(`"file"`), nil
	}
	return marshalEnum("storage", storageNames, int(s))
}

// UnmarshalJSON accepts "file" and "memory".
func (s *StorageType) UnmarshalJSON(b []byte) error {
	if string(b) == `""` {
		return fmt.Errorf("can not unmarshal storage %s", b)
	}
	v, err := unmarshalEnum("storage", storageNames, b)
	*s = StorageType(v)
	return err
}

// Compression is the on-disk compression of a stream. With S2 a file
// stream's sealed segments are S2-compressed (wal.Options.Compress); a
// memory stream keeps the setting and ignores it, as nats-server does.
type Compression int

const (
	// NoCompression stores messages as they are.
	NoCompression Compression = iota
	// S2Compression is nats-server's S2 block compression.
	S2Compression
)

var compressionNames = []string{"none", "s2"}

func (c Compression) String() string { return enumName(compressionNames, int(c)) }

// MarshalJSON writes "none" or "s2".
func (c Compression) MarshalJSON() ([]byte, error) {
	return marshalEnum("compression", compressionNames, int(c))
}

// UnmarshalJSON accepts "none", "s2" and "" (none).
func (c *Compression) UnmarshalJSON(b []byte) error {
	if string(b) == `""` {
		*c = NoCompression
		return nil
	}
	v, err := unmarshalEnum("compression", compressionNames, b)
	if err != nil {
		return errors.New("unknown compression algorithm") // nats-server's words
	}
	*c = Compression(v)
	return nil
}

// PersistMode is nats-server's per-stream persistence opt-in. jetwal accepts
// both values and always acknowledges under the server's sync policy, which
// is at least as durable as either.
type PersistMode int

const (
	// DefaultPersist acknowledges after the store's sync policy is met.
	DefaultPersist PersistMode = iota
	// AsyncPersist lets nats-server acknowledge before writing.
	AsyncPersist
)

var persistNames = []string{"default", "async"}

func (p PersistMode) String() string { return enumName(persistNames, int(p)) }

// MarshalJSON writes "default" or "async".
func (p PersistMode) MarshalJSON() ([]byte, error) {
	return marshalEnum("persist_mode", persistNames, int(p))
}

// UnmarshalJSON accepts "default", "async" and "" (default).
func (p *PersistMode) UnmarshalJSON(b []byte) error {
	if string(b) == `""` {
		*p = DefaultPersist
		return nil
	}
	v, err := unmarshalEnum("persist_mode", persistNames, b)
	*p = PersistMode(v)
	return err
}

func enumName(names []string, v int) string {
	if v < 0 || v >= len(names) {
		return fmt.Sprintf("unknown(%d)", v)
	}
	return names[v]
}

func marshalEnum(what string, names []string, v int) ([]byte, error) {
	if v < 0 || v >= len(names) || names[v] == "" {
		return nil, fmt.Errorf("can not marshal %s %d", what, v)
	}
	return json.Marshal(names[v])
}

func unmarshalEnum(what string, names []string, b []byte) (int, error) {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return 0, fmt.Errorf("can not unmarshal %s %s", what, b)
	}
	for i, n := range names {
		if n != "" && n == s {
			return i, nil
		}
	}
	return 0, fmt.Errorf("can not unmarshal %s %q", what, s)
}
