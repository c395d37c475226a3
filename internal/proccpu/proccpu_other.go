//go:build !unix

package proccpu

import "time"

// Used is not measured on this platform: it reports false.
func Used() (time.Duration, bool) { return 0, false }
