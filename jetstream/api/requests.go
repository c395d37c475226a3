package api

import "time"

// Paged is the paging block of NAMES, LIST and INFO responses.
type Paged struct {
	Total  int `json:"total"`
	Offset int `json:"offset"`
	Limit  int `json:"limit"`
}

// PagedRequest is the paging part of a request.
type PagedRequest struct {
	Offset int `json:"offset"`
}

// StreamCreateRequest is the body of STREAM.CREATE and STREAM.UPDATE: a
// config plus the pedantic flag jsm.go sends.
type StreamCreateRequest struct {
	StreamConfig
	Pedantic bool `json:"pedantic,omitempty"`
}

// StreamCreateResponse answers STREAM.CREATE (and, with TypeStreamUpdate,
// STREAM.UPDATE, where DidCreate stays false).
type StreamCreateResponse struct {
	Response
	*StreamInfo
	DidCreate bool `json:"did_create,omitempty"`
}

// StreamInfoRequest is the optional body of STREAM.INFO.
type StreamInfoRequest struct {
	PagedRequest
	DeletedDetails bool   `json:"deleted_details,omitempty"`
	SubjectsFilter string `json:"subjects_filter,omitempty"`
}

// StreamInfoResponse answers STREAM.INFO.
type StreamInfoResponse struct {
	Response
	Paged
	*StreamInfo
}

// StreamNamesRequest is the body of STREAM.NAMES and STREAM.LIST.
type StreamNamesRequest struct {
	PagedRequest
	// Subject keeps only streams with a subject that overlaps it.
	Subject string `json:"subject,omitempty"`
}

// StreamNamesResponse answers STREAM.NAMES. An empty result is "streams":null
// as nats-server sends it.
type StreamNamesResponse struct {
	Response
	Paged
	Streams []string `json:"streams"`
}

// StreamListResponse answers STREAM.LIST. An empty result is "streams":[].
type StreamListResponse struct {
	Response
	Paged
	Streams []*StreamInfo `json:"streams"`
	Missing []string      `json:"missing,omitempty"`
}

// StreamDeleteResponse answers STREAM.DELETE.
type StreamDeleteResponse struct {
	Response
	Success bool `json:"success,omitempty"`
}

// StreamPurgeRequest is the optional body of STREAM.PURGE.
type StreamPurgeRequest struct {
	// Sequence purges messages below it (exclusive).
	Sequence uint64 `json:"seq,omitempty"`
	// Subject limits the purge to matching messages.
	Subject string `json:"filter,omitempty"`
	// Keep leaves the newest Keep matching messages.
	Keep uint64 `json:"keep,omitempty"`
}

// StreamPurgeResponse answers STREAM.PURGE.
type StreamPurgeResponse struct {
	Response
	Success bool   `json:"success,omitempty"`
	Purged  uint64 `json:"purged"`
}

// MsgGetRequest is the body of STREAM.MSG.GET and DIRECT.GET.
type MsgGetRequest struct {
	Seq     uint64 `json:"seq,omitempty"`
	LastFor string `json:"last_by_subj,omitempty"`
	NextFor string `json:"next_by_subj,omitempty"`

	// The batch fields belong to DIRECT.GET's batched form.
	Batch        int        `json:"batch,omitempty"`
	MaxBytes     int        `json:"max_bytes,omitempty"`
	StartTime    *time.Time `json:"start_time,omitempty"`
	MultiLastFor []string   `json:"multi_last,omitempty"`
	UpToSeq      uint64     `json:"up_to_seq,omitempty"`
	UpToTime     *time.Time `json:"up_to_time,omitempty"`
	NoHeaders    bool       `json:"no_hdr,omitempty"`
}

// StoredMsg is a message as STREAM.MSG.GET returns it. Header and Data are
// base64 in JSON, as encoding/json writes []byte.
type StoredMsg struct {
	Subject  string    `json:"subject"`
	Sequence uint64    `json:"seq"`
	Header   []byte    `json:"hdrs,omitempty"`
	Data     []byte    `json:"data,omitempty"`
	Time     time.Time `json:"time"`
}

// MsgGetResponse answers STREAM.MSG.GET.
type MsgGetResponse struct {
	Response
	Message *StoredMsg `json:"message,omitempty"`
}

// MsgDeleteRequest is the body of STREAM.MSG.DELETE.
type MsgDeleteRequest struct {
	Seq     uint64 `json:"seq"`
	NoErase bool   `json:"no_erase,omitempty"`
}

// MsgDeleteResponse answers STREAM.MSG.DELETE.
type MsgDeleteResponse struct {
	Response
	Success bool `json:"success,omitempty"`
}
