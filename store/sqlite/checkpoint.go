package sqlite

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"time"
)

// The WAL is bounded by a background checkpointer; no request's commit ever runs a
// checkpoint. A PASSIVE checkpoint copies the WAL into the database file without blocking
// anyone, but it cannot rewind the WAL while writers keep appending to it: SQLite rewinds
// the WAL only at a write that begins after a checkpoint has copied every frame, so under a
// steady writer the file grew by the size of every commit (2.4 GB in 30 s with four
// clients). So the checkpointer runs a PASSIVE checkpoint every tick, which also reports how
// much of the WAL is in use; once that passes walReset, it runs another PASSIVE for what was
// written during the first, then takes the write lock for a RESTART checkpoint of the few
// frames written meanwhile, after which the next write starts again at the file's start.
// Writers wait for that step only: a few frames, one fsync and at most
// checkpointBusyTimeout for readers still on an older snapshot. Readers never wait.
//
// The file keeps its size when it is rewound: shrinking it (TRUNCATE, or journal_size_limit
// at the first commit after a rewind) costs about 20 ms per 30 MB freed on our test machine,
// which is not to be paid inside a request. So the checkpointer shrinks the file only when
// no write has committed for shrinkAfter, and journal_size_limit is set to maxWAL, a safety
// net for a WAL that readers kept from rewinding.
const (
	// checkpointTick is how often the checkpointer runs: every turn commits on its own (or
	// with the turns beside it), so the WAL grows faster than under batched writes.
	checkpointTick = 50 * time.Millisecond
	// walReset is the WAL use at which the checkpointer rewinds it: an eighth of the 64 MB
	// the store promises, the rest for what arrives while it does (every turn is its own
	// commit, or shares one with the turns beside it), on a busy machine up to
	// a few hundred milliseconds (four writers without pause add about 25 MB a second in
	// TestWALStaysBounded; four HTTP clients added 80 MB a second to the unbounded WAL).
	// Each rewind holds the write lock for the same short time whatever this size, so a
	// smaller one costs only more frequent rewinds.
	walReset = 8 << 20
	// maxWAL is the most the WAL file may hold (journal_size_limit).
	maxWAL = 64 << 20
	// walKeep: a store idle for shrinkAfter empties a WAL file larger than this (TRUNCATE).
	walKeep     = 4 << 20
	shrinkAfter = time.Second
	// checkpointBusyTimeout is how long the RESTART step waits for readers to be done with
	// the WAL before giving up until the next tick; it holds the write lock meanwhile, so
	// this bounds the writers' wait. Reads take milliseconds. Each postponement in a row
	// doubles the wait, up to maxCheckpointBusy, so that readers that never pause cannot
	// keep the WAL from rewinding.
	checkpointBusyTimeout = 10 * time.Millisecond
	maxCheckpointBusy     = 160 * time.Millisecond
	// walFull is the WAL use from which a rewind waits for readers up to walFullBusy: half
	// of maxWAL, so what arrives meanwhile still fits.
	walFull     = maxWAL / 2
	walFullBusy = time.Second
)

// checkpointStats count what the checkpointer did, for tests and the log.
type checkpointStats struct {
	resets    atomic.Int64 // RESTART and TRUNCATE checkpoints that rewound the WAL
	postponed atomic.Int64 // those a reader kept from rewinding it
	maxHold   atomic.Int64 // the longest the write lock was held for a RESTART, in nanoseconds
}

// checkpointLoop runs until ctx ends. A tick is counted from the end of the previous one's
// work, so "no commit since the last tick" means the writers were idle at least that long.
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
// PASSIVE one without it for what was written since the caller's. inUse is how much of the
// WAL the caller found in use: from walFull on, the rewind waits up to walFullBusy for
// readers, holding writers back meanwhile — backpressure, so that readers that keep
// postponing short waits cannot let fast writers take the WAL past maxWAL.
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
		// A reader was still on the WAL when the wait ran out; every frame it did not need
		// is copied, and the next tick tries again, waiting longer.
		s.ckpt.postponed.Add(1)
	}
}

// checkpointWaiting runs a checkpoint that waits at most wait for readers and writers.
func (s *Store) checkpointWaiting(ctx context.Context, mode string, wait time.Duration) (bool, int64, error) {
	// The checkpoint connection is one connection, so the setting holds for the checkpoint.
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
