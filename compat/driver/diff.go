package main

import (
	"encoding/json"
	"fmt"
	"sort"
)

// difference is one JSON path at which the two results differ.
type difference struct {
	path string // "$" for the whole document
	text string // both values, for the report
}

// jsonDiff lists the paths at which two JSON documents differ, with both
// values, at most limit entries. Documents that are not JSON compare whole.
func jsonDiff(a, b string, limit int) []difference {
	var va, vb any
	if json.Unmarshal([]byte(a), &va) != nil || json.Unmarshal([]byte(b), &vb) != nil {
		return []difference{{path: "$", text: fmt.Sprintf("$: jetwal=%s nats-server=%s", a, b)}}
	}
	var out []difference
	walkDiff("$", va, vb, &out, limit)
	return out
}

func walkDiff(path string, a, b any, out *[]difference, limit int) {
	if len(*out) >= limit {
		return
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := map[string]bool{}
		for k := range x {
			keys[k] = true
		}
		for k := range y {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			walkDiff(path+"."+k, x[k], y[k], out, limit)
		}
		return
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			break
		}
		for i := range x {
			walkDiff(fmt.Sprintf("%s[%d]", path, i), x[i], y[i], out, limit)
		}
		return
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		*out = append(*out, difference{path: path, text: fmt.Sprintf("%s: jetwal=%s nats-server=%s", path, show(a, ja), show(b, jb))})
	}
}

func show(v any, j []byte) string {
	if v == nil {
		return "(absent)"
	}
	return string(j)
}
