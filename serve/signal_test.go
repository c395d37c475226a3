package serve

import "testing"

func TestSignalErrors(t *testing.T) {
	for _, spec := range []string{"reload", "reload=abc", "explode=1", "reload=0"} {
		if err := SendSignal(spec); err == nil {
			t.Errorf("%q accepted", spec)
		}
	}
}
