package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"

	zs "zombiezen.com/go/sqlite"
)

// rowReader is what the rebuild's loaders read: *sql.Rows, or a stmtRows.
type rowReader interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// loadQuery is the querier of the rebuild's loaders: s.rdb's, or a loadConn's.
type loadQuery func(ctx context.Context, query string, args ...any) (rowReader, error)

// dbQuery adapts db to loadQuery.
func dbQuery(db *sql.DB) loadQuery {
	return func(ctx context.Context, query string, args ...any) (rowReader, error) {
		return db.QueryContext(ctx, query, args...)
	}
}

// loadConn is a read-only connection the rebuild's full scans read through, on
// zombiezen.com/go/sqlite (the same SQLite engine as the driver) rather than database/sql:
// a million memories' rebuild steps through 10 M edge rows and 1 M memory rows, and there
// every column read through database/sql paid for the driver's value boxing, database/sql's
// conversion and locks; read column by column with typed reads the edge scan takes about
// half the time. It is used by one goroutine at a time.
type loadConn struct{ c *zs.Conn }

// openLoadConn opens a loadConn on the store's file for index loads, or returns nil when the
// loads should read through s.rdb instead: the database is not a regular file, or the open
// failed (logged; database/sql still reads it).
func (s *Store) openLoadConn() *loadConn {
	c, ok, err := openLoad(s.path)
	if err != nil {
		s.log.Warn("sqlite: index loads read through database/sql", "err", err)
	}
	if !ok {
		return nil
	}
	return c
}

// openLoad opens path read-only; ok is false when path is not a regular file.
func openLoad(path string) (c *loadConn, ok bool, err error) {
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return nil, false, nil
	}
	zc, err := zs.OpenConn(path, zs.OpenReadOnly)
	if err != nil {
		return nil, false, err
	}
	zc.SetBusyTimeout(busyTimeout)
	return &loadConn{zc}, true, nil
}

// exec runs one statement, reading at most its first row.
func (c *loadConn) exec(q string) error {
	st, _, err := c.c.PrepareTransient(q)
	if err != nil {
		return err
	}
	defer st.Finalize()
	_, err = st.Step()
	return err
}

// Close closes the connection.
func (c *loadConn) Close() error { return c.c.Close() }

// query prepares q (kept prepared on the connection) with its arguments bound; the rows
// are read by Next and Scan and must be closed.
func (c *loadConn) query(ctx context.Context, q string, args ...any) (rowReader, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	st, err := c.c.Prepare(q)
	if err != nil {
		return nil, fmt.Errorf("sqlite: load: %w", err)
	}
	if err := bindAll(st, args); err != nil {
		st.Reset()
		st.ClearBindings()
		return nil, err
	}
	c.c.SetInterrupt(ctx.Done())
	return newStmtRows(ctx, st, func() {
		st.Reset()
		st.ClearBindings()
		c.c.SetInterrupt(nil)
	}), nil
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

// intScanner and floatScanner are scan destinations that take an INTEGER or a REAL (NULL as
// 0) without the boxing of Scan(any): the column kinds of columns.go are.
type (
	intScanner   interface{ scanInt(int64) }
	floatScanner interface{ scanFloat(float64) }
)

// Scan reads the current row into dest, as database/sql would for the destinations the
// loaders use: *string, *int, *int64, *float64, *sql.RawBytes (valid until the next Next)
// and sql.Scanner.
func (r *stmtRows) Scan(dest ...any) error {
	if !r.row {
		return errors.New("sqlite: load scan: no row")
	}
	if n := r.st.ColumnCount(); len(dest) != n {
		return fmt.Errorf("sqlite: load scan: %d destinations for %d columns", len(dest), n)
	}
	st := r.st
	for i, d := range dest {
		typ := st.ColumnType(i)
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
			if typ == zs.TypeNull {
				*d = nil
			} else {
				*d = append([]byte(nil), r.bytes(i)...)
			}
		case *sql.RawBytes:
			if typ == zs.TypeNull {
				*d = nil
			} else {
				*d = r.bytes(i)
			}
		case intScanner:
			if typ == zs.TypeInteger || typ == zs.TypeNull {
				d.scanInt(st.ColumnInt64(i))
			} else {
				err = d.(sql.Scanner).Scan(r.value(i, typ))
			}
		case floatScanner:
			if typ == zs.TypeInteger || typ == zs.TypeFloat || typ == zs.TypeNull {
				d.scanFloat(st.ColumnFloat(i))
			} else {
				err = d.(sql.Scanner).Scan(r.value(i, typ))
			}
		case *int:
			if typ != zs.TypeInteger {
				err = fmt.Errorf("want an INTEGER, got %v", typ)
			}
			*d = int(st.ColumnInt64(i))
		case *int64:
			if typ != zs.TypeInteger {
				err = fmt.Errorf("want an INTEGER, got %v", typ)
			}
			*d = st.ColumnInt64(i)
		case *float64:
			if typ != zs.TypeInteger && typ != zs.TypeFloat {
				err = fmt.Errorf("want a REAL, got %v", typ)
			}
			*d = st.ColumnFloat(i)
		case sql.Scanner:
			err = d.Scan(r.value(i, typ))
		case *any:
			*d = r.value(i, typ)
		default:
			err = scanNamed(d, r.value(i, typ))
		}
		if err != nil {
			return fmt.Errorf("sqlite: load scan: column %d: %w", i, err)
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

// value is column col as the driver hands it to a Scanner: int64, float64, string, []byte
// (a copy) or nil.
func (r *stmtRows) value(col int, typ zs.ColumnType) any {
	switch typ {
	case zs.TypeInteger:
		return r.st.ColumnInt64(col)
	case zs.TypeFloat:
		return r.st.ColumnFloat(col)
	case zs.TypeText:
		return string(r.bytes(col))
	case zs.TypeBlob:
		return append([]byte(nil), r.bytes(col)...)
	}
	return nil
}

// scanNamed scans v into a pointer to a bool or a (named) string, integer or float type
// (*models.Kind, say), as database/sql converts them; anything else is unsupported.
func scanNamed(dest, v any) error {
	p := reflect.ValueOf(dest)
	if p.Kind() != reflect.Pointer || p.IsNil() {
		return fmt.Errorf("unsupported destination %T", dest)
	}
	e := p.Elem()
	switch e.Kind() {
	case reflect.String:
		switch v := v.(type) {
		case string:
			e.SetString(v)
			return nil
		case []byte:
			e.SetString(string(v))
			return nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if v, ok := v.(int64); ok {
			e.SetInt(v)
			return nil
		}
	case reflect.Bool:
		if v, ok := v.(int64); ok {
			e.SetBool(v != 0)
			return nil
		}
	case reflect.Float32, reflect.Float64:
		switch v := v.(type) {
		case float64:
			e.SetFloat(v)
			return nil
		case int64:
			e.SetFloat(float64(v))
			return nil
		}
	default:
		return fmt.Errorf("unsupported destination %T", dest)
	}
	return fmt.Errorf("cannot scan %T into %T", v, dest)
}
