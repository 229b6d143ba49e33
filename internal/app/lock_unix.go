//go:build unix

package app

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockData takes the exclusive advisory lock on the data directory's lock file, held by
// serve and reembed for as long as they run: one process writes the database and keeps its
// indexes at a time, since a second server's writes would be missing from the first one's
// indexes. Commands that only read (metrics) take no lock. It never waits: it fails at once
// with errDataLocked when another process holds it. The operating system drops the lock when
// the process dies, so a crashed server leaves nothing to clean up. unlock releases it.
func lockData(dir string) (unlock func(), err error) {
	path := lockPath(dir)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errDataLocked
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
