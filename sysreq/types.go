package sysreq

import (
	"time"

	"github.com/jetwal/jetwal/monitor"
)

// The JSON shapes of nats-server v2.15's events.go, with the fields jetwal
// can fill.

// ServerInfo identifies the answering server (nats-server's ServerInfo).
type ServerInfo struct {
	Name      string    `json:"name"`
	Host      string    `json:"host"`
	ID        string    `json:"id"`
	Cluster   string    `json:"cluster,omitempty"`
	Domain    string    `json:"domain,omitempty"`
	Version   string    `json:"ver"`
	Tags      []string  `json:"tags,omitempty"`
	JetStream bool      `json:"jetstream"`
	Flags     uint64    `json:"flags"`
	Seq       uint64    `json:"seq"`
	Time      time.Time `json:"time"`
}

// flagJetStream is nats-server's JetStreamEnabled capability bit.
const flagJetStream = 1

// Response is nats-server's ServerAPIResponse.
type Response struct {
	Server *ServerInfo `json:"server"`
	Data   any         `json:"data,omitempty"`
	Error  *APIError   `json:"error,omitempty"`
}

// APIError is the error of a Response.
type APIError struct {
	Code        int    `json:"code"`
	Description string `json:"description,omitempty"`
}

// StatsMsg is nats-server's ServerStatsMsg, the answer to STATSZ and to a
// bare PING.
type StatsMsg struct {
	Server ServerInfo  `json:"server"`
	Stats  ServerStats `json:"statsz"`
}

// ServerStats is nats-server's ServerStats without gateways.
type ServerStats struct {
	Start            time.Time              `json:"start"`
	Mem              int64                  `json:"mem"`
	Cores            int                    `json:"cores"`
	CPU              float64                `json:"cpu"`
	Connections      int                    `json:"connections"`
	TotalConnections uint64                 `json:"total_connections"`
	ActiveAccounts   int                    `json:"active_accounts"`
	NumSubs          uint32                 `json:"subscriptions"`
	Sent             DataStats              `json:"sent"`
	SentToClients    DataStats              `json:"sent_to_clients"`
	Received         DataStats              `json:"received"`
	ReceivedClients  DataStats              `json:"received_from_clients"`
	SlowConsumers    int64                  `json:"slow_consumers"`
	StaleConnections int64                  `json:"stale_connections,omitempty"`
	Routes           []*RouteStat           `json:"routes,omitempty"`
	ActiveServers    int                    `json:"active_servers,omitempty"`
	JetStream        *monitor.JetStreamVarz `json:"jetstream,omitempty"`
	MaxProcs         int                    `json:"gomaxprocs,omitempty"`
}

// DataStats counts messages and bytes.
type DataStats struct {
	Msgs  int64 `json:"msgs"`
	Bytes int64 `json:"bytes"`
}

// RouteStat is one route in ServerStats.
type RouteStat struct {
	ID       uint64    `json:"rid"`
	Name     string    `json:"name,omitempty"`
	Sent     DataStats `json:"sent"`
	Received DataStats `json:"received"`
	Pending  int       `json:"pending"`
}

// ServerID is the answer to IDZ (no envelope, as in nats-server).
type ServerID struct {
	Name string `json:"name"`
	Host string `json:"host"`
	ID   string `json:"id"`
}

// ConnzEventOptions are the options of a CONNZ request, named and nested
// as nats-server's so that a decoding error reads as nats-server's (such as
// "json: cannot unmarshal number -5 into Go struct field
// ConnzEventOptions.ConnzOptions.cid of type uint64").
type ConnzEventOptions struct {
	monitor.ConnzOptions
	EventFilterOptions
}

// EventFilterOptions is the filter under nats-server's name, for the
// options types that embed it.
type EventFilterOptions = filter

// filter is nats-server's EventFilterOptions, embedded in every request's
// options: a server answers only when it matches.
type filter struct {
	Name       string   `json:"server_name,omitempty"`
	Cluster    string   `json:"cluster,omitempty"`
	Host       string   `json:"host,omitempty"`
	ExactMatch bool     `json:"exact_match,omitempty"`
	Tags       []string `json:"tags,omitempty"`
	Domain     string   `json:"domain,omitempty"`
}
