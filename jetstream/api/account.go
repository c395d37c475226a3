package api

// AccountLimits are the JetStream limits of an account; -1 means unlimited.
type AccountLimits struct {
	MaxMemory            int64 `json:"max_memory"`
	MaxStore             int64 `json:"max_storage"`
	MaxStreams           int   `json:"max_streams"`
	MaxConsumers         int   `json:"max_consumers"`
	MaxAckPending        int   `json:"max_ack_pending"`
	MemoryMaxStreamBytes int64 `json:"memory_max_stream_bytes"`
	StoreMaxStreamBytes  int64 `json:"storage_max_stream_bytes"`
	MaxBytesRequired     bool  `json:"max_bytes_required"`
}

// APIStats counts the API requests served since start.
type APIStats struct {
	Level  int    `json:"level"`
	Total  uint64 `json:"total"`
	Errors uint64 `json:"errors"`
}

// AccountStats is the usage and limits part of an account info.
type AccountStats struct {
	Memory         uint64        `json:"memory"`
	Store          uint64        `json:"storage"`
	ReservedMemory uint64        `json:"reserved_memory"`
	ReservedStore  uint64        `json:"reserved_storage"`
	Streams        int           `json:"streams"`
	Consumers      int           `json:"consumers"`
	Domain         string        `json:"domain,omitempty"`
	Limits         AccountLimits `json:"limits"`
	API            APIStats      `json:"api"`
}

// AccountInfoResponse answers $JS.API.INFO.
type AccountInfoResponse struct {
	Response
	*AccountStats
}
