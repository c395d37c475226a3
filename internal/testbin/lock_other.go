//go:build !unix

package testbin

import "sync"

var installMu sync.Mutex

// lockFile serialises installs within the process only: jetwal's tests run
// on unix, where lock_unix.go locks across processes.
func lockFile(string) (func(), error) {
	installMu.Lock()
	return installMu.Unlock, nil
}
