package sqlite

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"time"
)

// The WAL is bounded by a background checkpointer; no request's commit ever runs one (an
// automatic checkpoint copies and syncs the WAL inside whichever commit crosses 1,000
// pages). A PASSIVE checkpoint copies the WAL without blocking anyone but cannot rewind it
// under a steady writer: SQLite rewinds only at a write that begins after a checkpoint
// copied every frame. So every tick runs a PASSIVE checkpoint, which also reports the WAL
// in use; past walReset, a second PASSIVE copies what came meanwhile and a RESTART under
// the write lock copies the last few frames, so that the next write starts at the file's
// start. Writers wait for that step only; readers never wait. The file is shrunk
// (TRUNCATE, about 20 ms per 30 MB) only once writes pause for shrinkAfter.
const (
	checkpointTick = 50 * time.Millisecond
	// walReset is the WAL use at which the checkpointer rewinds it; the rest of maxWAL
	// takes what arrives while it does. A rewind's cost does not depend on this size.
	walReset = 8 << 20
	// maxWAL is the most the WAL file may hold (journal_size_limit).
	maxWAL = 64 << 20
	// walKeep: a store idle for shrinkAfter empties a WAL file larger than this (TRUNCATE).
	walKeep     = 4 << 20
	shrinkAfter = time.Second
	// checkpointBusyTimeout bounds the RESTART step's wait for readers, which holds the
	// write lock; each postponement in a row doubles it, up to maxCheckpointBusy, so that
	// readers that never pause cannot keep the WAL from rewinding.
	checkpointBusyTimeout = 10 * time.Millisecond
	maxCheckpointBusy     = 160 * time.Millisecond
	// From walFull on, a rewind waits for readers up to walFullBusy, holding writers back.
	walFull     = maxWAL / 2
	walFullBusy = time.Second
)

// checkpointStats count what the checkpointer did, for tests and the log.
type checkpointStats struct {
	resets    atomic.Int64 // RESTART and TRUNCATE checkpoints that rewound the WAL
	postponed atomic.Int64 // those a reader kept from rewinding it
	maxHold   atomic.Int64 // the longest the write lock was held for a RESTART, in nanoseconds
}

// checkpointLoop runs until ctx ends. "No commit since the last tick" means the writers
// were idle at least a tick.
func (s *Store) checkpointLoop(ctx context.Context) {
	defer s.checkpoints.Done()
	t := time.NewTimer(checkpointTick)
	defer t.Stop()
	commits := s.commits.Load()
	var quiet time.Duration // how long no write has committed
	for {
		t.Reset(checkpointTick)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		c := s.commits.Load()
		idle := c == commits
		commits = c
		if idle {
			quiet += checkpointTick
		} else {
			quiet = 0
		}
		if idle && (quiet < shrinkAfter || s.walSize() <= walKeep) {
			continue // nothing new to copy, nothing to shrink yet
		}
		_, frames, err := checkpoint(ctx, s.cdb, "PASSIVE")
		switch {
		case err != nil:
			if ctx.Err() == nil {
				s.log.Warn("sqlite: checkpoint", "err", err)
			}
		case idle:
			// First: a rewound WAL reports its old length until the next write.
			s.lockedCheckpoint(ctx, "TRUNCATE", 0)
		case frames*int64(s.pageSize+walFrameHeader) >= walReset:
			s.lockedCheckpoint(ctx, "RESTART", frames*int64(s.pageSize+walFrameHeader))
		}
	}
}

// walFrameHeader is the size of a WAL frame's header; a frame holds one page.
const walFrameHeader = 24

// lockedCheckpoint runs a RESTART or TRUNCATE checkpoint under the write lock, after a
// PASSIVE one without it. inUse is the WAL in use the caller found (see walFull).
func (s *Store) lockedCheckpoint(ctx context.Context, mode string, inUse int64) {
	if _, _, err := checkpoint(ctx, s.cdb, "PASSIVE"); err != nil {
		if ctx.Err() == nil {
			s.log.Warn("sqlite: checkpoint", "err", err)
		}
		return
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if ctx.Err() != nil || s.closed {
		return
	}
	t0 := time.Now()
	wait := min(checkpointBusyTimeout<<s.postponedInRow, maxCheckpointBusy)
	if inUse >= walFull {
		wait = walFullBusy
	}
	done, _, err := s.checkpointWaiting(ctx, mode, wait)
	if hold := int64(time.Since(t0)); mode == "RESTART" && hold > s.ckpt.maxHold.Load() {
		s.ckpt.maxHold.Store(hold) // only this goroutine writes it
	}
	switch {
	case err != nil:
		if ctx.Err() == nil {
			s.log.Warn("sqlite: checkpoint", "mode", mode, "err", err)
		}
	case done:
		s.ckpt.resets.Add(1)
		s.postponedInRow = 0
	default:
		s.postponedInRow = min(s.postponedInRow+1, 8)
		s.ckpt.postponed.Add(1)
	}
}

// checkpointWaiting runs a checkpoint that waits at most wait for readers and writers.
func (s *Store) checkpointWaiting(ctx context.Context, mode string, wait time.Duration) (bool, int64, error) {
	if _, err := s.cdb.ExecContext(ctx, fmt.Sprintf(`PRAGMA busy_timeout = %d`, wait.Milliseconds())); err != nil {
		return false, 0, err
	}
	return checkpoint(ctx, s.cdb, mode)
}

// checkpoint runs a checkpoint of the given mode and returns whether it completed (for
// RESTART and TRUNCATE: whether the WAL was rewound) and the frames the WAL holds.
func checkpoint(ctx context.Context, db *conn, mode string) (done bool, frames int64, err error) {
	var busy, copied int64
	if err := db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(`+mode+`)`).Scan(&busy, &frames, &copied); err != nil {
		return false, 0, err
	}
	return busy == 0, frames, nil
}

// walSize returns the size of the WAL file, 0 when there is none.
func (s *Store) walSize() int64 {
	st, err := os.Stat(s.path + "-wal")
	if err != nil {
		return 0
	}
	return st.Size()
}
