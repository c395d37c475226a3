package validate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
)

// capturedPairs returns the captured STREAM.CREATE requests with the config
// nats-server answered them with.
func capturedCreatePairs(t *testing.T) map[string][2][]byte {
	t.Helper()
	f, err := os.Open("../api/testdata/captured.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][2][]byte{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var head []string
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		if head == nil {
			head = strings.Fields(line)
			continue
		}
		if strings.HasPrefix(head[2], api.SubjStreamCreate) {
			p := out[head[2]]
			if head[0] == "req" {
				p[0] = []byte(line)
			} else {
				var resp struct {
					Config json.RawMessage `json:"config"`
				}
				if err := json.Unmarshal([]byte(line), &resp); err != nil {
					t.Fatal(err)
				}
				p[1] = resp.Config
			}
			out[head[2]] = p
		}
		head = nil
	}
	if len(out) < 2 {
		t.Fatalf("found %d create captures", len(out))
	}
	return out
}

// TestNormalizeMatchesCapturedCreate feeds the CLI's captured create
// requests through the defaults and requires nats-server's answer, byte for
// byte, once the server version and API level are the captured ones.
func TestNormalizeMatchesCapturedCreate(t *testing.T) {
	for subj, p := range capturedCreatePairs(t) {
		var req api.StreamCreateRequest
		if err := json.Unmarshal(p[0], &req); err != nil {
			t.Fatal(err)
		}
		cfg, aerr := Stream(&req.StreamConfig)
		if aerr != nil {
			t.Fatalf("%s: %v", subj, aerr)
		}
		got, err := json.Marshal(WithDynamicMetadata(cfg, "2.15.2"))
		if err != nil {
			t.Fatal(err)
		}
		// The captures' nats-server 2.15.2 reports API level 5.
		got = bytes.Replace(got, []byte(`"_nats.level":"`+strconv.Itoa(api.Level)+`"`), []byte(`"_nats.level":"5"`), 1)
		if !bytes.Equal(got, p[1]) {
			t.Errorf("%s:\n got %s\nwant %s", subj, got, p[1])
		}
	}
}

func TestNormalizeDefaults(t *testing.T) {
	cfg, aerr := Stream(&api.StreamConfig{Name: "ORDERS"})
	if aerr != nil {
		t.Fatal(aerr)
	}
	if cfg.Storage != api.FileStorage || cfg.Replicas != 1 || cfg.MaxMsgs != -1 || cfg.MaxBytes != -1 ||
		cfg.MaxMsgsPer != -1 || cfg.MaxMsgSize != -1 || cfg.MaxConsumers != -1 ||
		cfg.Duplicates != 2*time.Minute || len(cfg.Subjects) != 1 || cfg.Subjects[0] != "ORDERS" ||
		cfg.Metadata[api.MetaRequiredLevel] != "0" {
		t.Fatalf("defaults: %+v", cfg)
	}
	cfg, aerr = Stream(&api.StreamConfig{Name: "S", MaxAge: time.Minute})
	if aerr != nil || cfg.Duplicates != time.Minute {
		t.Fatalf("window not capped at max age: %v %v", cfg.Duplicates, aerr)
	}
	cfg, _ = Stream(&api.StreamConfig{Name: "S", AllowAtomicPublish: true, AllowBatchPublish: true})
	if cfg.Metadata[api.MetaRequiredLevel] != "4" {
		t.Fatalf("required level %q", cfg.Metadata[api.MetaRequiredLevel])
	}
	req := api.StreamConfig{Name: "S", Subjects: []string{"a"}, Metadata: map[string]string{"k": "v"}}
	if _, aerr := Stream(&req); aerr != nil || len(req.Metadata) != 1 {
		t.Fatalf("caller's config modified: %+v", req)
	}
}

func TestNormalizeRejects(t *testing.T) {
	cases := []struct {
		name string
		cfg  api.StreamConfig
		code api.ErrCode
		text string
	}{
		{"empty name", api.StreamConfig{}, api.ErrStreamInvalidConfig, "name"},
		{"dot in name", api.StreamConfig{Name: "a.b"}, api.ErrStreamInvalidConfig, "name"},
		{"path separator", api.StreamConfig{Name: "a/b"}, api.ErrStreamNamePathSeparators, "separator"},
		{"replicas 6", api.StreamConfig{Name: "S", Replicas: 6}, api.ErrStreamInvalidConfig, "maximum replicas is 5"},
		{"negative replicas", api.StreamConfig{Name: "S", Replicas: -1}, api.ErrReplicasNegative, ""},
		{"negative age", api.StreamConfig{Name: "S", MaxAge: -1}, api.ErrStreamInvalidConfig, "max age"},
		{"tiny age", api.StreamConfig{Name: "S", MaxAge: time.Millisecond}, api.ErrStreamInvalidConfig, "100ms"},
		{"window over age", api.StreamConfig{Name: "S", MaxAge: time.Second, Duplicates: time.Minute}, api.ErrStreamInvalidConfig, "duplicates"},
		{"rollup without purge", api.StreamConfig{Name: "S", DenyPurge: true, AllowRollup: true}, api.ErrStreamInvalidConfig, "purge"},
		{"per subject without new", api.StreamConfig{Name: "S", DiscardNewPer: true, MaxMsgsPer: 1}, api.ErrStreamInvalidConfig, "discard new"},
		{"per subject without limit", api.StreamConfig{Name: "S", DiscardNewPer: true, Discard: api.DiscardNew}, api.ErrStreamInvalidConfig, "per subject"},
		{"bad subject", api.StreamConfig{Name: "S", Subjects: []string{"a..b"}}, api.ErrStreamInvalidConfig, "invalid subject"},
		{"dup subject", api.StreamConfig{Name: "S", Subjects: []string{"a", "a"}}, api.ErrStreamInvalidConfig, "duplicate"},
		{"self overlap", api.StreamConfig{Name: "S", Subjects: []string{"a.*", "a.b"}}, api.ErrStreamInvalidConfig, "overlaps"},
		{"capture all", api.StreamConfig{Name: "S", Subjects: []string{">"}}, api.ErrStreamInvalidConfig, "no-ack"},
		{"api namespace", api.StreamConfig{Name: "S", Subjects: []string{"$JS.API.STREAM.>"}}, api.ErrStreamInvalidConfig, "no-ack"},
		{"mirror with subjects", api.StreamConfig{Name: "S", Subjects: []string{"s"}, Mirror: json.RawMessage(`{"name":"O"}`)}, api.ErrMirrorWithSubjects, "mirrors can not contain subjects"},
		{"mirror filter and transforms", api.StreamConfig{Name: "S", Mirror: json.RawMessage(`{"name":"O","filter_subject":"a","subject_transforms":[{"src":"a","dest":"b"}]}`)}, api.ErrStreamInvalidConfig, "cannot also have a single subject filter"},
		{"source bad transform", api.StreamConfig{Name: "S", Sources: json.RawMessage(`[{"name":"O","subject_transforms":[{"src":"a.*","dest":"b.$2"}]}]`)}, api.ErrStreamInvalidConfig, "source transform"},
		{"source external", api.StreamConfig{Name: "S", Sources: json.RawMessage(`[{"name":"O","external":{"api":"$JS.x.API"}}]`)}, api.ErrStreamInvalidConfig, "not supported by jetwal"},
		{"source overlapping transforms", api.StreamConfig{Name: "S", Sources: json.RawMessage(`[{"name":"O","subject_transforms":[{"src":"a.*","dest":"x.{{wildcard(1)}}"},{"src":"a.>","dest":"y.>"}]}]`)}, api.ErrSourceOverlappingFilters, "source filters can not overlap"},
		{"source same transform sources", api.StreamConfig{Name: "S", Sources: json.RawMessage(`[{"name":"O","subject_transforms":[{"src":"a.b","dest":"x"},{"src":"a.b","dest":"y"}]}]`)}, api.ErrSourceOverlappingFilters, "source filters can not overlap"},
		{"mirror overlapping transforms", api.StreamConfig{Name: "S", Mirror: json.RawMessage(`{"name":"O","subject_transforms":[{"src":"a.*.c","dest":"x.{{wildcard(1)}}"},{"src":"a.b.*","dest":"y.{{wildcard(1)}}"}]}`)}, api.ErrMirrorOverlappingFilters, "mirror subject filters can not overlap"},
		{"source external own api", api.StreamConfig{Name: "S", Sources: json.RawMessage(`[{"name":"O","external":{"api":"$JS.API"}}]`)}, api.ErrStreamExternalAPIOverlap, "stream external api prefix $JS.API must not overlap with $JS.API"},
		{"mirror external own api", api.StreamConfig{Name: "S", Mirror: json.RawMessage(`{"name":"O","external":{"api":"$JS.API"}}`)}, api.ErrStreamExternalAPIOverlap, "stream external api prefix $JS.API must not overlap with $JS.API"},
		{"external api wildcard", api.StreamConfig{Name: "S", Sources: json.RawMessage(`[{"name":"O","external":{"api":"$JS.*.API"}}]`)}, api.ErrStreamInvalidConfig, `stream external api prefix "$JS.*.API" must be a valid subject without wildcards`},
		{"mirror direct without mirror", api.StreamConfig{Name: "S", MirrorDirect: true}, api.ErrStreamInvalidConfig, "stream has no mirror but does have mirror direct"},
		{"bad mirror json", api.StreamConfig{Name: "S", Mirror: json.RawMessage(`{"name":7}`)}, api.ErrStreamInvalidConfig, "invalid mirror"},
		{"delete marker TTL under 1s", api.StreamConfig{Name: "S", SubjectDeleteMarkerTTL: time.Second / 2}, api.ErrStreamInvalidConfig, "subject delete marker TTL must be at least 1 second"},
	}
	for _, c := range cases {
		_, aerr := Stream(&c.cfg)
		if aerr == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if aerr.ErrCode != c.code || !strings.Contains(aerr.Description, c.text) {
			t.Errorf("%s: got %v", c.name, aerr)
		}
	}
	// Allowed exceptions and the no-ack escape hatch.
	for _, ok := range []api.StreamConfig{
		{Name: "E", Subjects: []string{"$JS.EVENT.>"}},
		{Name: "A", Subjects: []string{">"}, NoAck: true},
		{Name: "M", Mirror: json.RawMessage(`null`)},
		// Overlapping but neither a subset of the other: nats-server
		// accepts these in a source.
		{Name: "T", Sources: json.RawMessage(`[{"name":"O","subject_transforms":[{"src":"a.*.c","dest":"x.{{wildcard(1)}}"},{"src":"a.b.*","dest":"y.{{wildcard(1)}}"}]}]`)},
	} {
		if _, aerr := Stream(&ok); aerr != nil {
			t.Errorf("%+v rejected: %v", ok.Subjects, aerr)
		}
	}
}

func TestCheckUpdate(t *testing.T) {
	norm := func(c api.StreamConfig) api.StreamConfig {
		n, aerr := Stream(&c)
		if aerr != nil {
			t.Fatal(aerr)
		}
		return n
	}
	old := norm(api.StreamConfig{Name: "S", Subjects: []string{"a"}, DenyDelete: true})
	bad := []api.StreamConfig{
		{Name: "T", Subjects: []string{"a"}, DenyDelete: true},
		{Name: "S", Subjects: []string{"a"}, DenyDelete: true, Storage: api.MemoryStorage},
		{Name: "S", Subjects: []string{"a"}},
		{Name: "S", Subjects: []string{"a"}, DenyDelete: true, Retention: api.WorkQueueRetention},
	}
	for i, b := range bad {
		n := norm(b)
		if _, aerr := StreamUpdate(&old, &n); aerr == nil {
			t.Errorf("update %d accepted", i)
		}
	}
	upd := norm(api.StreamConfig{Name: "S", Subjects: []string{"a", "b"}, DenyDelete: true, MaxMsgs: 10, Retention: api.InterestRetention})
	got, aerr := StreamUpdate(&old, &upd)
	if aerr != nil || got.MaxMsgs != 10 || len(got.Subjects) != 2 {
		t.Fatalf("update rejected: %v %+v", aerr, got)
	}
	sealed := upd
	sealed.Sealed = true
	got, aerr = StreamUpdate(&old, &sealed)
	if aerr != nil || !got.DenyPurge || got.Discard != api.DiscardNew || got.MaxAge != 0 {
		t.Fatalf("sealing: %v %+v", aerr, got)
	}
	if _, aerr := StreamUpdate(&got, &upd); aerr == nil {
		t.Fatal("unsealed")
	}
}

func TestSameConfigIgnoresServerMetadata(t *testing.T) {
	a, _ := Stream(&api.StreamConfig{Name: "S"})
	b := WithDynamicMetadata(a, "9.9.9")
	if !SameStream(&a, &b) {
		t.Fatal("dynamic metadata made configs differ")
	}
	b.MaxMsgs = 5
	if SameStream(&a, &b) {
		t.Fatal("different configs compare equal")
	}
}

// TestPersistModeAsyncRules: persist_mode async is accepted on a file
// stream (requiring API level 2) and refused, as nats-server refuses it, on
// memory storage and with atomic batch publish.
func TestPersistModeAsyncRules(t *testing.T) {
	cfg, aerr := Stream(&api.StreamConfig{Name: "A", PersistMode: api.AsyncPersist})
	if aerr != nil || cfg.Metadata[api.MetaRequiredLevel] != "2" {
		t.Fatalf("file stream: %+v %v", aerr, cfg.Metadata)
	}
	for what, c := range map[string]api.StreamConfig{
		"async persist mode is only supported on file storage":          {Name: "M", PersistMode: api.AsyncPersist, Storage: api.MemoryStorage},
		"async persist mode is not supported with atomic batch publish": {Name: "B", PersistMode: api.AsyncPersist, AllowAtomicPublish: true},
	} {
		if _, aerr := Stream(&c); aerr == nil || aerr.ErrCode != api.ErrStreamInvalidConfig || aerr.Description != what {
			t.Fatalf("%s: got %+v", c.Name, aerr)
		}
	}
}

// TestPersistModeNotUpdatable: an update can change persist_mode neither
// way, as nats-server refuses it.
func TestPersistModeNotUpdatable(t *testing.T) {
	for _, c := range [][2]api.PersistMode{{api.AsyncPersist, api.DefaultPersist}, {api.DefaultPersist, api.AsyncPersist}} {
		old, aerr := Stream(&api.StreamConfig{Name: "A", PersistMode: c[0]})
		if aerr != nil {
			t.Fatal(aerr)
		}
		upd, aerr := Stream(&api.StreamConfig{Name: "A", PersistMode: c[1]})
		if aerr != nil {
			t.Fatal(aerr)
		}
		if _, aerr := StreamUpdate(&old, &upd); aerr == nil || aerr.ErrCode != api.ErrStreamInvalidConfig ||
			aerr.Description != "stream configuration update can not change persist mode" {
			t.Fatalf("%v to %v: got %+v", c[0], c[1], aerr)
		}
	}
}
