package api

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

// capture is one JSON document from testdata/captured.txt.
type capture struct {
	kind, file, subject string
	body                []byte
}

func loadCaptures(t *testing.T) []capture {
	t.Helper()
	f, err := os.Open("testdata/captured.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []capture
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
			if len(head) != 3 {
				t.Fatalf("bad header line %q", line)
			}
			continue
		}
		out = append(out, capture{head[0], head[1], head[2], []byte(line)})
		head = nil
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) < 20 {
		t.Fatalf("only %d captures loaded", len(out))
	}
	return out
}

// roundTrip decodes b into v, encodes v again and requires the same bytes.
func roundTrip(t *testing.T, c capture, v any) {
	t.Helper()
	if err := json.Unmarshal(c.body, v); err != nil {
		t.Fatalf("%s %s: decode: %v", c.file, c.subject, err)
	}
	got, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%s %s: encode: %v", c.file, c.subject, err)
	}
	if !bytes.Equal(got, c.body) {
		t.Errorf("%s %s: re-encoded JSON differs\n got: %s\nwant: %s", c.file, c.subject, got, c.body)
	}
}

// TestCapturedResponsesRoundTrip checks that every stream and account
// response nats-server sent in the walkthrough decodes into our types and
// re-encodes to the identical bytes: same field names, order and omissions.
func TestCapturedResponsesRoundTrip(t *testing.T) {
	seen := map[string]int{}
	for _, c := range loadCaptures(t) {
		var typ struct {
			Type string `json:"type"`
		}
		switch c.kind {
		case "resp":
			if err := json.Unmarshal(c.body, &typ); err != nil {
				t.Fatal(err)
			}
		case "puback":
			// The fast encoder must produce nats-server's exact bytes,
			// including the space in "duplicate": true.
			var a PubAck
			if err := json.Unmarshal(c.body, &a); err != nil {
				t.Fatal(err)
			}
			name, _ := json.Marshal(a.Stream)
			if got := AppendPubAck(nil, PubAckPrefix(name, ""), a.Sequence, a.Duplicate); !bytes.Equal(got, c.body) {
				t.Errorf("%s: PubAck %s, want %s", c.file, got, c.body)
			}
			seen["puback"]++
			continue
		case "metainf":
			var m struct {
				Created time.Time `json:"Created"`
				StreamConfig
			}
			roundTrip(t, c, &m)
			seen["metainf"]++
			continue
		default:
			continue
		}
		var v any
		switch typ.Type {
		case TypeAccountInfo:
			v = &AccountInfoResponse{}
		case TypeStreamCreate:
			v = &StreamCreateResponse{}
		case TypeStreamInfo:
			v = &StreamInfoResponse{}
		case TypeStreamList:
			v = &StreamListResponse{}
		case TypeStreamNames:
			v = &StreamNamesResponse{}
		case TypeStreamPurge:
			v = &StreamPurgeResponse{}
		case TypeStreamDelete:
			v = &StreamDeleteResponse{}
		case TypeMsgGet:
			v = &MsgGetResponse{}
		default:
			continue // consumer responses belong to the consumer layer
		}
		roundTrip(t, c, v)
		seen[typ.Type]++
	}
	for _, k := range []string{TypeAccountInfo, TypeStreamCreate, TypeStreamInfo, TypeStreamList,
		TypeStreamNames, TypeStreamPurge, TypeStreamDelete, TypeMsgGet, "puback", "metainf"} {
		if seen[k] == 0 {
			t.Errorf("no capture of %s was checked", k)
		}
	}
}

// TestCapturedRequestsDecode decodes the captured CLI requests.
func TestCapturedRequestsDecode(t *testing.T) {
	n := 0
	for _, c := range loadCaptures(t) {
		if c.kind != "req" {
			continue
		}
		switch {
		case strings.HasPrefix(c.subject, SubjStreamCreate):
			var r StreamCreateRequest
			if err := json.Unmarshal(c.body, &r); err != nil {
				t.Fatalf("%s: %v", c.file, err)
			}
			if r.Name == "" || len(r.Subjects) != 1 || r.Duplicates != 2*time.Minute || r.MaxMsgSize != -1 || !r.AllowDirect {
				t.Errorf("%s: decoded %+v", c.file, r.StreamConfig)
			}
			n++
		case c.subject == SubjStreamList:
			var r StreamNamesRequest
			if err := json.Unmarshal(c.body, &r); err != nil {
				t.Fatalf("%s: %v", c.file, err)
			}
			n++
		case strings.HasPrefix(c.subject, SubjMsgGet):
			var r MsgGetRequest
			if err := json.Unmarshal(c.body, &r); err != nil {
				t.Fatalf("%s: %v", c.file, err)
			}
			if r.Seq == 0 {
				t.Errorf("%s: no seq in %s", c.file, c.body)
			}
			n++
		}
	}
	if n < 4 {
		t.Fatalf("only %d requests checked", n)
	}
}

func TestEnumsRejectUnknown(t *testing.T) {
	var cfg StreamConfig
	for _, bad := range []string{
		`{"retention":"forever"}`, `{"discard":"newest"}`, `{"storage":"tape"}`,
		`{"storage":""}`, `{"compression":"zstd"}`, `{"persist_mode":"later"}`, `{"retention":3}`,
	} {
		if err := json.Unmarshal([]byte(bad), &cfg); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
	if err := json.Unmarshal([]byte(`{"retention":"workqueue","discard":"new","storage":"memory","compression":"s2","persist_mode":"async"}`), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Retention != WorkQueueRetention || cfg.Discard != DiscardNew || cfg.Storage != MemoryStorage ||
		cfg.Compression != S2Compression || cfg.PersistMode != AsyncPersist {
		t.Fatalf("decoded %+v", cfg)
	}
}

func TestErrorsCarryNatsCodes(t *testing.T) {
	cases := []struct {
		code   ErrCode
		status int
	}{
		{ErrStreamNotFound, 404}, {ErrNoMessageFound, 404}, {ErrStreamNameExist, 400},
		{ErrStreamSubjectOverlap, 400}, {ErrBadRequest, 400}, {ErrStreamInvalidConfig, 500},
		{ErrStreamStoreFailed, 503}, {ErrStreamWrongLastSequence, 400}, {ErrConsumerNotFound, 404},
	}
	for _, c := range cases {
		e := NewError(c.code)
		if e.Code != c.status || e.ErrCode != c.code || e.Description == "" {
			t.Errorf("%d: got %+v", c.code, e)
		}
	}
	b, _ := json.Marshal(Response{Type: TypeStreamInfo, Error: NewError(ErrStreamNotFound)})
	if want := `{"type":"io.nats.jetstream.api.v1.stream_info_response","error":{"code":404,"err_code":10059,"description":"stream not found"}}`; string(b) != want {
		t.Fatalf("got %s", b)
	}
	if e := Errorf(ErrStreamWrongLastSequence, "wrong last sequence: %d", 4); e.Error() != "wrong last sequence: 4 (10071)" || e.Code != 400 {
		t.Fatalf("got %v %d", e, e.Code)
	}
}

func TestAppendPubAck(t *testing.T) {
	name, _ := json.Marshal("python_articles")
	p := PubAckPrefix(name, "")
	if got := string(AppendPubAck(nil, p, 8, false)); got != `{"stream":"python_articles","seq":8}` {
		t.Fatal(got)
	}
	if got := string(AppendPubAck(nil, p, 9, true)); got != `{"stream":"python_articles","seq":9,"duplicate": true}` {
		t.Fatal(got)
	}
}

func TestCloneIsDeep(t *testing.T) {
	c := StreamConfig{Subjects: []string{"a"}, Metadata: map[string]string{"k": "v"}, Placement: &Placement{Tags: []string{"t"}}}
	n := c.Clone()
	n.Subjects[0], n.Metadata["k"], n.Placement.Tags[0] = "b", "w", "u"
	if c.Subjects[0] != "a" || c.Metadata["k"] != "v" || c.Placement.Tags[0] != "t" {
		t.Fatalf("clone shares memory: %+v", c)
	}
}
