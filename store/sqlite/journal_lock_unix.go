//go:build unix

package sqlite

import (
	"errors"
	"os"
	"syscall"
)

// lockJournal takes the journal file for this process (flock, exclusive, never waiting);
// false with no error when another process holds it. The lock goes with the process.
func lockJournal(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}
