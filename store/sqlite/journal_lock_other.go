//go:build !unix && !windows

package sqlite

import "os"

// lockJournal takes no lock where neither flock nor LockFileEx exists: there, one process
// per database is the operator's to ensure.
func lockJournal(f *os.File) (bool, error) { return true, nil }
