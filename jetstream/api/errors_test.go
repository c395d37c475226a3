package api

import "testing"

// TestErrTablesDisjoint: every code is in exactly one of the tables that
// make errTable, so none silently replaces another's status or text.
func TestErrTablesDisjoint(t *testing.T) {
	seen := map[ErrCode]string{}
	for name, table := range map[string]map[ErrCode]errInfo{
		"coreErrors": coreErrors, "sourceErrors": sourceErrors, "snapshotErrors": snapshotErrors,
		"batchErrors": batchErrors, "scheduleErrors": scheduleErrors, "clusterOpsErrors": clusterOpsErrors,
		"consumerOpsErrors": consumerOpsErrors,
	} {
		for code := range table {
			if other, dup := seen[code]; dup {
				t.Errorf("code %d is in %s and %s", code, other, name)
			}
			seen[code] = name
		}
	}
	if len(errTable) != len(seen) {
		t.Errorf("errTable has %d codes, the tables %d", len(errTable), len(seen))
	}
	for _, c := range []ErrCode{ErrStreamNotFound, ErrMirrorWithSources, ErrStreamSnapshot, ErrAtomicPublishTooManyInflight, ErrMessageSchedulesDisabled} {
		if e := NewError(c); e.Description == "error" || e.Code != c.Status() {
			t.Errorf("code %d: %+v, not from its table", c, e)
		}
	}
	if got := ErrAtomicPublishTooManyInflight.Status(); got != 429 {
		t.Errorf("ErrAtomicPublishTooManyInflight.Status() = %d, want 429", got)
	}
}
