package api

// API subjects. Request subjects end in the stream name (and, for DIRECT.GET,
// optionally in a subject).
const (
	// Prefix is the prefix every JetStream API subject starts with.
	Prefix = "$JS.API."
	// Wildcard subscribes to every API subject.
	Wildcard = "$JS.API.>"

	SubjAccountInfo  = "$JS.API.INFO"
	SubjStreamNames  = "$JS.API.STREAM.NAMES"
	SubjStreamList   = "$JS.API.STREAM.LIST"
	SubjStreamCreate = "$JS.API.STREAM.CREATE." // + stream
	SubjStreamUpdate = "$JS.API.STREAM.UPDATE." // + stream
	SubjStreamInfo   = "$JS.API.STREAM.INFO."   // + stream
	SubjStreamDelete = "$JS.API.STREAM.DELETE." // + stream
	SubjStreamPurge  = "$JS.API.STREAM.PURGE."  // + stream
	SubjMsgGet       = "$JS.API.STREAM.MSG.GET."
	SubjMsgDelete    = "$JS.API.STREAM.MSG.DELETE."
	SubjDirectGet    = "$JS.API.DIRECT.GET." // + stream [+ "." + subject]
)

// Response types ("type" field of every API response).
const (
	TypeAccountInfo          = "io.nats.jetstream.api.v1.account_info_response"
	TypeStreamCreate         = "io.nats.jetstream.api.v1.stream_create_response"
	TypeStreamUpdate         = "io.nats.jetstream.api.v1.stream_update_response"
	TypeStreamInfo           = "io.nats.jetstream.api.v1.stream_info_response"
	TypeStreamNames          = "io.nats.jetstream.api.v1.stream_names_response"
	TypeStreamList           = "io.nats.jetstream.api.v1.stream_list_response"
	TypeStreamDelete         = "io.nats.jetstream.api.v1.stream_delete_response"
	TypeStreamPurge          = "io.nats.jetstream.api.v1.stream_purge_response"
	TypeStreamLeaderStepDown = "io.nats.jetstream.api.v1.stream_leader_stepdown_response"
	TypeMsgGet               = "io.nats.jetstream.api.v1.stream_msg_get_response"
	TypeMsgDelete            = "io.nats.jetstream.api.v1.stream_msg_delete_response"
	TypeConsumerInfo         = "io.nats.jetstream.api.v1.consumer_info_response"
	TypeConsumerNames        = "io.nats.jetstream.api.v1.consumer_names_response"
	TypeConsumerList         = "io.nats.jetstream.api.v1.consumer_list_response"
	// TypeError is jetwal's own: the type of the error answer to an unknown
	// API operation or a request whose handler failed unexpectedly (where
	// nats-server sends nothing). Clients read only its "error" object.
	TypeError = "io.nats.jetstream.api.v1.error_response"
)

// Paging limits: how many entries one NAMES or LIST page holds, and how many
// subjects a STREAM.INFO with subjects_filter reports per page.
const (
	NamesLimit         = 1024
	ListLimit          = 256
	SubjectDetailLimit = 100_000
)

// Level is the JetStream API level jetwal reports (INFO "api_lvl",
// account info "api.level" and the _nats.level metadata), and the highest
// a request may ask for in Nats-Required-Api-Level. jetwal serves level 1
// (nats-server 2.11: per-message TTLs, subject delete markers, consumer
// pause, priority groups), level 2 (2.12: message counters, atomic batch
// publish, message schedules, persist_mode async, which jetwal acknowledges
// under its own sync policy), level 3 (snapshot window_size flow
// control) and level 4 (2.14: fast batch publish, and the flow_control ack
// policy of mirror and source consumers). Not level 5 (2.15: detecting a
// recreated source stream).
// Raise it only with all the features of the new level.
const Level = 4

// Metadata keys nats-server manages inside StreamConfig.Metadata. Only
// MetaRequiredLevel is stored; the other two are added to create, update and
// info responses.
const (
	MetaRequiredLevel = "_nats.req.level"
	MetaServerLevel   = "_nats.level"
	MetaServerVersion = "_nats.ver"
	// MetaReservedPrefix starts every key the server owns.
	MetaReservedPrefix = "_nats."
)
