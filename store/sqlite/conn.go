package sqlite

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"strconv"
	"sync/atomic"

	zs "zombiezen.com/go/sqlite"
)

// Every connection of the store is a conn on zombiezen.com/go/sqlite: the writer, the read
// pool, the index loads and the checkpointer. A conn runs SQL with its arguments bound in
// order and reads rows with Next and Scan. The statements it runs stay prepared on it
// (zombiezen's Prepare keeps them by text: modernc's SQLite spends about three times as
// long preparing a short statement as running it), so every statement's text must come
// from a bounded set: lists go in as one argument (inList), never as placeholders. A conn
// is used by one goroutine at a time.
type conn struct{ c *zs.Conn }

// errNoRows is what QueryRowContext's Scan returns when the query has no row.
var errNoRows = errors.New("sqlite: no rows in result set")

// openConn opens a connection to path with the given flags and runs each pragma on it.
func openConn(path string, flags zs.OpenFlags, pragmas ...string) (*conn, error) {
	zc, err := zs.OpenConn(path, flags)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open: %w", err)
	}
	zc.SetBusyTimeout(busyTimeout)
	c := &conn{c: zc}
	for _, p := range pragmas {
		if _, err := c.ExecContext(context.Background(), `PRAGMA `+p); err != nil {
			zc.Close()
			return nil, fmt.Errorf("sqlite: open: PRAGMA %s: %w", p, err)
		}
	}
	return c, nil
}

func (c *conn) Close() error { return c.c.Close() }

// prepared, when set (by TestMain, statements_test.go), hears the text of every statement a
// connection runs.
var prepared atomic.Pointer[func(query string)]

// stmt prepares query (or finds it prepared) with args bound; done resets it.
func (c *conn) stmt(query string, args []any) (st *zs.Stmt, done func(), err error) {
	if hear := prepared.Load(); hear != nil {
		(*hear)(query)
	}
	if st, err = c.c.Prepare(query); err != nil {
		return nil, nil, err
	}
	done = func() { st.Reset(); st.ClearBindings() }
	if err := bindAll(st, args); err != nil {
		done()
		return nil, nil, err
	}
	return st, done, nil
}

// bindAll binds args to st's parameters in order (?NNN to the NNNth); an argument past the
// statement's last parameter is ignored.
func bindAll(st *zs.Stmt, args []any) error {
	for i, a := range args[:min(len(args), st.BindParamCount())] {
		i++
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
			case reflect.Float32, reflect.Float64:
				st.BindFloat(i, r.Float())
			default:
				return fmt.Errorf("sqlite: cannot bind %T", a)
			}
		}
	}
	return nil
}

// ExecContext runs a statement to its end and returns the rows it changed.
func (c *conn) ExecContext(ctx context.Context, query string, args ...any) (int64, error) {
	st, done, err := c.stmt(query, args)
	if err != nil {
		return 0, err
	}
	defer done()
	for {
		row, err := st.Step()
		if err != nil {
			return 0, err
		}
		if !row {
			return int64(c.c.Changes()), nil
		}
	}
}

// QueryContext runs a query whose rows are read with Next and Scan; Close them.
func (c *conn) QueryContext(ctx context.Context, query string, args ...any) (rowReader, error) {
	st, done, err := c.stmt(query, args)
	if err != nil {
		return nil, err
	}
	return newStmtRows(ctx, st, done), nil
}

// QueryRowContext runs a query for its first row; Scan returns errNoRows when none.
func (c *conn) QueryRowContext(ctx context.Context, query string, args ...any) scanner {
	rows, err := c.QueryContext(ctx, query, args...)
	return firstRow{rows, err}
}

// query is QueryContext stopped by ctx: a statement of a connection that runs one query at
// a time (the read pool's, an index load's) is interrupted once ctx is done.
func (c *conn) query(ctx context.Context, query string, args ...any) (rowReader, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.c.SetInterrupt(ctx.Done())
	rows, err := c.QueryContext(ctx, query, args...)
	if err != nil {
		c.c.SetInterrupt(nil)
		return nil, err
	}
	r := rows.(*stmtRows)
	reset := r.done
	r.done = func() { reset(); c.c.SetInterrupt(nil) }
	return r, nil
}

// firstRow is QueryRowContext's row.
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
		return errNoRows
	}
	return r.rows.Scan(dest...)
}

// pool is the read pool: connections handed to one query at a time.
type pool chan *conn

func (p pool) take(ctx context.Context) (*conn, error) {
	select {
	case c, ok := <-p:
		if !ok {
			return nil, errors.New("sqlite: the store is closed")
		}
		return c, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// QueryContext runs a query on a pooled connection, which returns to the pool when the rows
// are closed.
func (p pool) QueryContext(ctx context.Context, query string, args ...any) (rowReader, error) {
	c, err := p.take(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := c.query(ctx, query, args...)
	if err != nil {
		p <- c
		return nil, err
	}
	r := rows.(*stmtRows)
	reset := r.done
	r.done = func() { reset(); p <- c }
	return r, nil
}

// QueryRowContext is conn.QueryRowContext on a pooled connection.
func (p pool) QueryRowContext(ctx context.Context, query string, args ...any) scanner {
	rows, err := p.QueryContext(ctx, query, args...)
	return firstRow{rows, err}
}

// snapshot runs fn on a pooled connection in one read transaction: fn's queries (c.query)
// all see the database as it was at the first.
func (p pool) snapshot(ctx context.Context, fn func(c *conn) error) error {
	c, err := p.take(ctx)
	if err != nil {
		return err
	}
	defer func() { p <- c }()
	if _, err := c.ExecContext(ctx, `BEGIN`); err != nil {
		return err
	}
	defer c.ExecContext(ctx, `ROLLBACK`) // it wrote nothing
	return fn(c)
}

// rowsOf ranges over the rows of a query — rowsOf(q.QueryContext(…)) — and closes them when
// the loop ends, however it ends. A failed query or step comes as the last pair's error.
func rowsOf(rows rowReader, err error) iter.Seq2[scanner, error] {
	return func(yield func(scanner, error) bool) {
		if err != nil {
			yield(nil, err)
			return
		}
		defer rows.Close()
		for rows.Next() {
			if !yield(rows, nil) {
				return
			}
		}
		if err := rows.Err(); err != nil {
			yield(nil, err)
		}
	}
}

// rowReader is what a query's rows are read through.
type rowReader interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// stmtRows steps through one prepared statement, read column by column.
type stmtRows struct {
	ctx  context.Context
	st   *zs.Stmt
	done func() // resets or finalizes st
	row  bool
	err  error
	bufs [][]byte // each column's bytes, reused row after row
	// last holds each column's last text scanned into a *string, handed out again while the
	// column repeats it: a scan in key order repeats the namespace, an edge's source and
	// type, a memory's kind and conversation, and each was a string allocated a row.
	last []string
}

func newStmtRows(ctx context.Context, st *zs.Stmt, done func()) *stmtRows {
	n := st.ColumnCount()
	return &stmtRows{ctx: ctx, st: st, done: done, last: make([]string, n), bufs: make([][]byte, n)}
}

// Next steps to the next row; false at the end, on an error (Err) or once the context is done.
func (r *stmtRows) Next() bool {
	r.row = false
	if r.err != nil || r.st == nil {
		return false
	}
	r.row, r.err = r.st.Step()
	if r.err != nil && r.ctx.Err() != nil {
		r.err = r.ctx.Err() // interrupted (SetInterrupt)
	}
	return r.row
}

func (r *stmtRows) Err() error { return r.err }

func (r *stmtRows) Close() error {
	if r.st != nil {
		r.done()
		r.st = nil
	}
	return nil
}

// The scan destinations beyond plain pointers: the column kinds of columns.go.
type (
	intScanner   interface{ scanInt(int64) }          // an INTEGER; NULL as 0
	floatScanner interface{ scanFloat(float64) }      // a REAL or an INTEGER; NULL as 0
	bytesScanner interface{ scanBytes([]byte) error } // TEXT or a BLOB, valid during the call; NULL as empty
	// rawBytes is a column's bytes as they are, valid until the next Next; nil for NULL.
	rawBytes []byte
)

// Scan reads the current row into dest: *string, *[]byte, *rawBytes, *int, *int64,
// *float64, *bool or the scanners above. A named string type goes in as *string:
// (*string)(&m.Kind).
func (r *stmtRows) Scan(dest ...any) error {
	if !r.row {
		return errors.New("sqlite: scan: no row")
	}
	if n := r.st.ColumnCount(); len(dest) != n {
		return fmt.Errorf("sqlite: scan: %d destinations for %d columns", len(dest), n)
	}
	st := r.st
	for i, d := range dest {
		typ := st.ColumnType(i)
		isInt, isNull := typ == zs.TypeInteger, typ == zs.TypeNull
		var err error
		switch d := d.(type) {
		case *string:
			switch typ {
			case zs.TypeNull:
				err = errors.New("converting NULL to string is unsupported")
			case zs.TypeInteger:
				*d = strconv.FormatInt(st.ColumnInt64(i), 10)
			case zs.TypeFloat:
				*d = strconv.FormatFloat(st.ColumnFloat(i), 'g', -1, 64)
			default:
				if b := r.bytes(i); string(b) == r.last[i] {
					*d = r.last[i]
				} else {
					*d = string(b)
					r.last[i] = *d
				}
			}
		case *[]byte:
			*d = nil
			if !isNull {
				*d = append([]byte(nil), r.bytes(i)...)
			}
		case *rawBytes:
			*d = nil
			if !isNull {
				*d = r.bytes(i)
			}
		case intScanner:
			if !isInt && !isNull {
				err = fmt.Errorf("want an INTEGER, got %v", typ)
			}
			d.scanInt(st.ColumnInt64(i))
		case floatScanner:
			if !isInt && !isNull && typ != zs.TypeFloat {
				err = fmt.Errorf("want a REAL, got %v", typ)
			}
			d.scanFloat(st.ColumnFloat(i))
		case bytesScanner:
			var b []byte
			if typ == zs.TypeText || typ == zs.TypeBlob {
				b = r.bytes(i)
			} else if !isNull {
				err = fmt.Errorf("want TEXT, got %v", typ)
			}
			if err == nil {
				err = d.scanBytes(b)
			}
		case *int:
			if !isInt {
				err = fmt.Errorf("want an INTEGER, got %v", typ)
			}
			*d = int(st.ColumnInt64(i))
		case *int64:
			if !isInt {
				err = fmt.Errorf("want an INTEGER, got %v", typ)
			}
			*d = st.ColumnInt64(i)
		case *float64:
			if !isInt && typ != zs.TypeFloat {
				err = fmt.Errorf("want a REAL, got %v", typ)
			}
			*d = st.ColumnFloat(i)
		case *bool:
			if !isInt {
				err = fmt.Errorf("want an INTEGER, got %v", typ)
			}
			*d = st.ColumnInt64(i) != 0
		default:
			err = fmt.Errorf("cannot scan %v into %T", typ, d)
		}
		if err != nil {
			return fmt.Errorf("sqlite: scan: column %d: %w", i, err)
		}
	}
	return nil
}

// bytes reads column col's text or blob into the column's buffer: valid until the next Scan.
func (r *stmtRows) bytes(col int) []byte {
	n := r.st.ColumnLen(col)
	if cap(r.bufs[col]) < n {
		r.bufs[col] = make([]byte, n)
	}
	return r.bufs[col][:r.st.ColumnBytes(col, r.bufs[col][:n])]
}
