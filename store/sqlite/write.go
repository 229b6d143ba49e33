package sqlite

import (
	"context"
	"database/sql"
	"time"
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
	w := &wtx{s: s}
	defer w.preparePending(ctx) // after the rollback below: the connection must be free
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return wrap(err, what)
	}
	committed := false
	defer func() {
		if !committed {
			tx.Rollback()
		}
	}()
	w.tx = tx
	apply, err := fn(w)
	if err != nil {
		return wrap(err, what)
	}
	if err := tx.Commit(); err != nil {
		return wrap(err, what)
	}
	committed = true
	s.commits.Add(1)
	w.countFolded()
	if w.states != nil {
		s.states.wrote(w.states, time.Now())
	}
	if apply != nil && s.ready.Load() {
		apply()
	}
	return nil
}

// wtx is a write transaction whose statements are prepared once on the writer connection
// and reused by every later transaction: modernc's SQLite spends about three times as long
// preparing (parsing and planning) a short statement as running it, and engagement runs the
// same few statements hundreds of times a second. A statement met for the first time is
// prepared for its transaction only, then on the connection once the transaction has ended
// (the connection, the writer's only one, is the transaction's until then). Statements whose
// text depends on a list's length are kept too, up to maxPrepared in all.
type wtx struct {
	s       *Store
	tx      *sql.Tx
	stmts   map[string]*sql.Stmt // this transaction's handles, closed when it ends
	pending []string             // statements to prepare on the connection afterwards
	// folded: the transaction folded the stored surfacings (surfaced.go); surfaced counts
	// the surfacings it stored after that, or at all.
	folded   bool
	surfaced int
	states   map[string]string // the state keys written, for the cache (state.go)
}

// maxPrepared bounds the statements kept prepared on the writer connection.
const maxPrepared = 256

// stmt returns the transaction's handle of query's statement. The store's statements are
// guarded by wmu, which every write transaction holds.
func (w *wtx) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := w.stmts[query]; ok {
		return st, nil
	}
	var st *sql.Stmt
	if p, ok := w.s.prepared[query]; ok {
		st = w.tx.StmtContext(ctx, p)
	} else {
		var err error
		if st, err = w.tx.PrepareContext(ctx, query); err != nil {
			return nil, err
		}
		if len(w.s.prepared)+len(w.pending) < maxPrepared {
			w.pending = append(w.pending, query)
		}
	}
	if w.stmts == nil {
		w.stmts = map[string]*sql.Stmt{}
	}
	w.stmts[query] = st
	return st, nil
}

// preparePending prepares on the writer connection the statements the transaction met for
// the first time; a failure only means they are prepared again next time.
func (w *wtx) preparePending(ctx context.Context) {
	for _, q := range w.pending {
		if _, ok := w.s.prepared[q]; ok {
			continue
		}
		p, err := w.s.wdb.PrepareContext(ctx, q)
		if err != nil {
			return
		}
		w.s.prepared[q] = p
	}
}
func (w *wtx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := w.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (w *wtx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := w.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

func (w *wtx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := w.stmt(ctx, query)
	if err != nil {
		return w.tx.QueryRowContext(ctx, query, args...) // reports the error through the Row
	}
	return st.QueryRowContext(ctx, args...)
}
