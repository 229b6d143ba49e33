package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"time"

	zs "zombiezen.com/go/sqlite"
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
	if w.states != nil {
		s.states.wrote(w.states, time.Now())
	}
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
	states   map[string]string // the state keys written, for the cache (state.go)
}

// conn is the store's one write connection, on zombiezen.com/go/sqlite: the statements it
// runs stay prepared on it (modernc's SQLite spends about three times as long preparing a
// short statement as running it, and engagement runs the same few hundreds of times a
// second). Statements whose text depends on a list's length are kept too, up to maxKept
// distinct texts; past that they are prepared for one use. Guarded by the write mutex
// (tests may use it when nothing else writes).
type conn struct {
	c    *zs.Conn
	kept map[string]bool
}

// maxKept bounds the statements kept prepared on the writer connection.
const maxKept = 256

// stmt prepares query with args bound; done resets or finalizes it.
func (c *conn) stmt(query string, args []any) (st *zs.Stmt, done func(), err error) {
	if c.kept[query] || len(c.kept) < maxKept {
		if st, err = c.c.Prepare(query); err != nil {
			return nil, nil, err
		}
		c.kept[query] = true
		done = func() { st.Reset(); st.ClearBindings() }
	} else {
		if st, _, err = c.c.PrepareTransient(query); err != nil {
			return nil, nil, err
		}
		done = func() { st.Finalize() }
	}
	if err := bindAll(st, args); err != nil {
		done()
		return nil, nil, err
	}
	return st, done, nil
}

// bindAll binds args to st's parameters in order (?NNN to the NNNth); an argument past the
// statement's last parameter is ignored, as the driver does.
func bindAll(st *zs.Stmt, args []any) error {
	for i, a := range args[:min(len(args), st.BindParamCount())] {
		if err := bind(st, i+1, a); err != nil {
			return err
		}
	}
	return nil
}

// bind binds one argument as database/sql would for the kinds the store passes.
func bind(st *zs.Stmt, i int, a any) error {
	switch v := a.(type) {
	case nil:
		st.BindNull(i)
	case string:
		st.BindText(i, v)
	case []byte:
		st.BindBytes(i, v)
	case int64:
		st.BindInt64(i, v)
	case int:
		st.BindInt64(i, int64(v))
	case float64:
		st.BindFloat(i, v)
	case bool:
		st.BindBool(i, v)
	default:
		switch r := reflect.ValueOf(a); r.Kind() { // named types: models.Outcome, ...
		case reflect.String:
			st.BindText(i, r.String())
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			st.BindInt64(i, r.Int())
		case reflect.Uint8, reflect.Uint16, reflect.Uint32:
			st.BindInt64(i, int64(r.Uint()))
		case reflect.Float32, reflect.Float64:
			st.BindFloat(i, r.Float())
		default:
			return fmt.Errorf("sqlite: cannot bind %T", a)
		}
	}
	return nil
}

// ExecContext runs a statement to its end.
func (c *conn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, done, err := c.stmt(query, args)
	if err != nil {
		return nil, err
	}
	defer done()
	for {
		row, err := st.Step()
		if err != nil {
			return nil, err
		}
		if !row {
			return execResult{c.c}, nil
		}
	}
}

// execResult is an ExecContext's sql.Result, read from the connection right after it.
type execResult struct{ c *zs.Conn }

func (r execResult) LastInsertId() (int64, error) { return r.c.LastInsertRowID(), nil }
func (r execResult) RowsAffected() (int64, error) { return int64(r.c.Changes()), nil }

// QueryContext runs a query whose rows are read with Next and Scan; Close them.
func (c *conn) QueryContext(ctx context.Context, query string, args ...any) (rowReader, error) {
	st, done, err := c.stmt(query, args)
	if err != nil {
		return nil, err
	}
	return newStmtRows(ctx, st, done), nil
}

// QueryRowContext runs a query for its first row; Scan returns sql.ErrNoRows when none.
func (c *conn) QueryRowContext(ctx context.Context, query string, args ...any) scanner {
	rows, err := c.QueryContext(ctx, query, args...)
	return firstRow{rows, err}
}

// firstRow is QueryRowContext's row, as *sql.Row is database/sql's.
type firstRow struct {
	rows rowReader
	err  error
}

func (r firstRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return sql.ErrNoRows
	}
	return r.rows.Scan(dest...)
}
