package sqlite

import (
	"context"
	"time"
)

// Hooks for the upgrade fixture's generator (upgrade_fixture_test.go, package sqlite_test):
// they reach into the journal, so they go with it.

// CompactForFixture folds what was written so far into the database file and vacuums it,
// so the committed fixture stays small.
func CompactForFixture(s *Store) error {
	if err := s.settle(context.Background()); err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if _, err := s.wdb.Exec(`VACUUM`); err != nil {
		return err
	}
	_, _, err := s.checkpointWaiting(context.Background(), "TRUNCATE", time.Second)
	return err
}

// HoldForFixture stops the journal's applier and the background checkpointer: from here on,
// turns stay in the journal and commits in the WAL, as a killed process leaves them. Close
// still applies them.
func HoldForFixture(s *Store) {
	s.jr.stopApplier()
	s.stopCheckpoints()
	s.checkpoints.Wait()
}

// JournalPending is the number of turns journaled and not applied to SQLite.
func JournalPending(s *Store) int { return int(s.jr.pendingN.Load()) }
