package report

import (
	"time"

	"github.com/jetwal/jetwal/bench/internal/proc"
	"github.com/jetwal/jetwal/bench/internal/workload"
)

// Data is everything one comparison run measured.
type Data struct {
	Meta     Meta
	Runs     []Run
	Peaks    []Peak
	Growth   []GrowthPoint
	Durables []DurablePoint
	// Disk holds the disk's durable write rate, measured at the start of
	// each session (proc.MeasureDiskWrite).
	Disk []DiskPoint
}

// Meta describes the run: what was compared, where and how.
type Meta struct {
	Quick    bool
	Started  time.Time
	Finished time.Time
	// A and B are the two servers; ratios are A/B.
	A, B ServerInfo
	Host Host
	// Command is the command line of the bench binary for this run.
	Command []string
	Reps    int
	Sizes   []int
	Modes   []proc.Mode
	// GrowthSize is the payload size of the growth appends.
	GrowthSize int
	// GrowthTargets are the requested stream sizes.
	GrowthTargets []int64
	// Settings describe the counts, caps and windows used, one per line.
	Settings []string
	// Notes are caveats the suite recorded (reduced counts, errors).
	Notes []string
}

// ServerInfo identifies one server under test.
type ServerInfo struct {
	Name    string
	Kind    proc.Kind
	Path    string
	Version string
	// Commands maps each mode to the command line used, with placeholders.
	Commands map[proc.Mode]string
}

// Host describes the machine.
type Host struct {
	CPU       string
	Cores     int
	Kernel    string
	GoVersion string
	OS        string
}

// Run is one workload run against one server.
type Run struct {
	Mode     proc.Mode
	Rep      int
	Server   string
	Workload workload.Name
	Size     int
	// Count is the number of messages asked for; Result.Msgs is what was
	// measured.
	Count  int
	Cap    time.Duration
	Result workload.Result
	// ServerCPU is the user plus system CPU time the server process used
	// during the run (from /proc/PID/stat before and after, 10 ms
	// resolution); CPUMeasured is false when it could not be read.
	ServerCPU   time.Duration
	CPUMeasured bool
	// ClientCPU is the CPU time the benchmark process itself, where the
	// clients run, used during the run (getrusage); ClientCPUMeasured is
	// false when it could not be read.
	ClientCPU         time.Duration
	ClientCPUMeasured bool
	// Err is the error that ended the run, if any.
	Err string
}

// Peak is the peak resident set size of one server over one session (one
// repetition of one mode: every workload at every size).
type Peak struct {
	Server string
	Mode   proc.Mode
	Rep    int
	Peak   proc.Bytes
}

// DiskPoint is one measurement of the durable write rate of the disk
// holding the servers' store directories, taken before a session's servers
// start.
type DiskPoint struct {
	Mode  proc.Mode
	Rep   int
	MiBps float64 // 0 when Err is set
	Err   string
}

// GrowthPoint is what the growth test measured at one stream size.
type GrowthPoint struct {
	Server string
	// Target is the requested stream size; Msgs what the stream held.
	Target int64
	Msgs   int64
	// AppendRate is the publish rate of the appends that grew the stream
	// from the previous point to this one, in msgs/s; AppendMBs in MiB/s.
	AppendRate float64
	AppendMBs  float64
	// RSS and HWM are sampled right after the appends; AnonRSS is the
	// anonymous part of RSS (without store file pages mapped in).
	RSS     proc.Bytes
	HWM     proc.Bytes
	AnonRSS proc.Bytes
	// Disk is the size of the store directory.
	Disk proc.Bytes
	// StopTime is how long a SIGTERM shutdown took.
	StopTime time.Duration
	// CleanRestart is the time from exec to the stream answering after a
	// clean shutdown; RestartRSS the resident set size right after it.
	CleanRestart   time.Duration
	RestartRSS     proc.Bytes
	RestartAnonRSS proc.Bytes
	// KillRestart is the same after SIGKILL; Recovered is the message count
	// the stream reported then.
	KillRestart time.Duration
	Recovered   int64
	// Truncated is set when the time budget ended the appends early.
	Truncated bool
	Err       string
}

// DurablePoint is what the durable-consumers test measured on one server:
// many durable consumers on one stream, idle, then restarted.
type DurablePoint struct {
	Server string
	// Consumers is the number of durable consumers created; Msgs the
	// messages in their stream.
	Consumers int
	Msgs      int
	// CreateTime is how long creating them one at a time took.
	CreateTime time.Duration
	// IdleCPU is the CPU the server used while the consumers sat idle, as
	// a fraction of one core, over IdleWindow.
	IdleCPU    float64
	IdleWindow time.Duration
	// RSS is sampled after the idle window; AnonRSS is its anonymous part.
	RSS     proc.Bytes
	AnonRSS proc.Bytes
	// CleanRestart and KillRestart run from exec until the last consumer
	// answers a consumer info request, after SIGTERM and after SIGKILL.
	CleanRestart time.Duration
	KillRestart  time.Duration
	// After is the consumer count stream info reported after the kill -9
	// restart.
	After int
	Err   string
}
