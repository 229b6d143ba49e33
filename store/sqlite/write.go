package sqlite

import (
	"context"
	"fmt"
)

// write runs fn in one write transaction and commits it. fn returns an apply function (may
// be nil) that updates the in-memory state; it runs after the commit, still under the write
// mutex, so the indexes see changes in commit order and only committed changes.
func (s *Store) write(ctx context.Context, what string, fn func(tx *wtx) (func(), error)) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.writeLocked(ctx, what, fn)
}

// writeLocked is write for a caller holding wmu.
func (s *Store) writeLocked(ctx context.Context, what string, fn func(tx *wtx) (func(), error)) error {
	if err := ctx.Err(); err != nil {
		return wrap(err, what)
	}
	if s.closed {
		return fmt.Errorf("sqlite: %s: the store is closed", what)
	}
	w := &wtx{s: s, conn: s.wdb}
	s.wdb.c.SetInterrupt(ctx.Done())
	defer s.wdb.c.SetInterrupt(nil)
	if _, err := w.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		return wrap(err, what)
	}
	committed := false
	defer func() {
		if !committed {
			s.wdb.c.SetInterrupt(nil) // a cancelled context must not stop the rollback
			w.ExecContext(context.Background(), `ROLLBACK`)
		}
	}()
	apply, err := fn(w)
	if err != nil {
		return wrap(err, what)
	}
	if _, err := w.ExecContext(ctx, `COMMIT`); err != nil {
		return wrap(err, what)
	}
	committed = true
	s.commits.Add(1)
	w.countFolded()
	if apply != nil && s.ready.Load() {
		apply()
	}
	return nil
}

// wtx is a write transaction on the writer connection.
type wtx struct {
	s *Store
	*conn
	// folded: the transaction folded the stored surfacings (surfaced.go); surfaced counts
	// the surfacings it stored after that, or at all.
	folded   bool
	surfaced int
}
