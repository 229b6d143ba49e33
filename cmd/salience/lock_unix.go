//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockData takes an advisory lock on the data directory's lock file: shared for serve (so
// servers never block each other), exclusive for commands that rewrite the database under
// it (reembed). It never waits: it fails at once when the other kind is held, naming the
// file. The operating system drops the lock when the process dies, so a crashed server
// leaves nothing to clean up. The returned function releases it.
func lockData(dir string, exclusive bool) (unlock func(), err error) {
	path := lockPath(dir)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock file: %w", err)
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	if err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB); err != nil {
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
