package jetstream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// captured is one JSON document from api/testdata/captured.txt.
type captured struct {
	kind, file, subject string
	body                []byte
}

func loadCaptured(t *testing.T) []captured {
	t.Helper()
	f, err := os.Open("api/testdata/captured.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []captured
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
		out = append(out, captured{head[0], head[1], head[2], []byte(line)})
		head = nil
	}
	return out
}

// capturedBody returns the first captured document of kind whose file starts
// with file and whose subject starts with subj, and which contains every
// string in has.
func capturedBody(t *testing.T, kind, file, subj string, has ...string) []byte {
	t.Helper()
next:
	for _, c := range loadCaptured(t) {
		if c.kind != kind || !strings.HasPrefix(c.file, file) || !strings.HasPrefix(c.subject, subj) {
			continue
		}
		for _, h := range has {
			if !bytes.Contains(c.body, []byte(h)) {
				continue next
			}
		}
		return c.body
	}
	t.Fatalf("no capture %s %s %s %v", kind, file, subj, has)
	return nil
}

// jsonShape lists the key paths of a JSON document in document order, e.g.
// "config", "config.name", …; array elements contribute "[]". Values are
// ignored, so two documents have the same shape when they carry the same
// fields in the same order.
func jsonShape(t *testing.T, b []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out []string
	var walk func(prefix string) error
	walk = func(prefix string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch d := tok.(type) {
		case json.Delim:
			switch d {
			case '{':
				for dec.More() {
					k, err := dec.Token()
					if err != nil {
						return err
					}
					p := k.(string)
					if prefix != "" {
						p = prefix + "." + p
					}
					out = append(out, p)
					if err := walk(p); err != nil {
						return err
					}
				}
				_, err = dec.Token()
				return err
			case '[':
				for dec.More() {
					if err := walk(prefix + "[]"); err != nil {
						return err
					}
				}
				_, err = dec.Token()
				return err
			}
		}
		return nil
	}
	if err := walk(""); err != nil {
		t.Fatalf("shape of %s: %v", b, err)
	}
	return out
}

// sameShape fails the test unless got has exactly want's fields, in order.
func sameShape(t *testing.T, what string, got, want []byte) {
	t.Helper()
	g, w := jsonShape(t, got), jsonShape(t, want)
	if strings.Join(g, " ") != strings.Join(w, " ") {
		t.Errorf("%s: fields differ\n got: %v\nwant: %v\n got json: %s\nwant json: %s", what, g, w, got, want)
	}
}
