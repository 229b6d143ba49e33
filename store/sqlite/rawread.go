package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strconv"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/libc/sys/types"
	sqlite3 "modernc.org/sqlite/lib"
)

// rowReader is what the rebuild's loaders read: *sql.Rows, or a rawRows.
type rowReader interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// querier of the rebuild's loaders: s.rdb's, or a rawConn's.
type loadQuery func(ctx context.Context, query string, args ...any) (rowReader, error)

// dbQuery adapts db to loadQuery.
func dbQuery(db *sql.DB) loadQuery {
	return func(ctx context.Context, query string, args ...any) (rowReader, error) {
		return db.QueryContext(ctx, query, args...)
	}
}

// rawConn is a read-only connection to the database file that the rebuild's full scans read
// through, bypassing database/sql and the driver: a million memories' rebuild steps through
// 10 M edge rows and 1 M memory rows, and there every column read paid for the driver's
// value boxing, database/sql's conversion and locks, and the connection mutex SQLite takes in
// each call on a connection opened SQLITE_OPEN_FULLMUTEX, as the driver opens every one.
// This one is opened SQLITE_OPEN_NOMUTEX and read column by column: the edge scan takes about
// half the time (a 100k corpus's million edges: 1.2 s against 2.4 s). It is used by one
// goroutine at a time.
type rawConn struct {
	tls *libc.TLS
	db  uintptr
}

// openRaw opens path read-only; ok is false when path is not a regular file (the caller
// then reads through database/sql).
func openRaw(path string) (c *rawConn, ok bool, err error) {
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return nil, false, nil
	}
	c = &rawConn{tls: libc.NewTLS()}
	name, err := libc.CString(path)
	if err != nil {
		c.tls.Close()
		return nil, false, err
	}
	defer libc.Xfree(c.tls, name)
	pdb := libc.Xmalloc(c.tls, types.Size_t(unsafe.Sizeof(uintptr(0))))
	if pdb == 0 {
		c.tls.Close()
		return nil, false, errors.New("sqlite: raw open: out of memory")
	}
	defer libc.Xfree(c.tls, pdb)
	rc := sqlite3.Xsqlite3_open_v2(c.tls, name, pdb, sqlite3.SQLITE_OPEN_READONLY|sqlite3.SQLITE_OPEN_NOMUTEX, 0)
	c.db = loadPtr(pdb)
	if rc != sqlite3.SQLITE_OK {
		err := c.errorf(rc, "open")
		c.Close()
		return nil, false, err
	}
	sqlite3.Xsqlite3_busy_timeout(c.tls, c.db, int32(busyTimeout.Milliseconds()))
	return c, true, nil
}

// openLoadConn opens a rawConn on the store's file for index loads, or returns nil when the
// loads should read through s.rdb instead: the database is not a regular file, or the open
// failed (logged; database/sql still reads it).
func (s *Store) openLoadConn() *rawConn {
	c, ok, err := openRaw(s.path)
	if err != nil {
		s.log.Warn("sqlite: index loads read through database/sql", "err", err)
	}
	if !ok {
		return nil
	}
	return c
}

// Close closes the connection; its statements must be closed first.
func (c *rawConn) Close() error {
	if c.db != 0 {
		sqlite3.Xsqlite3_close_v2(c.tls, c.db)
		c.db = 0
	}
	c.tls.Close()
	return nil
}

func (c *rawConn) errorf(rc int32, what string) error {
	msg := ""
	if c.db != 0 {
		msg = libc.GoString(sqlite3.Xsqlite3_errmsg(c.tls, c.db))
	}
	return fmt.Errorf("sqlite: %s: %s (%d)", what, msg, rc)
}

// query prepares q with its arguments (strings or integers) bound; the rows are read by
// Next and Scan and must be closed.
func (c *rawConn) query(ctx context.Context, q string, args ...any) (rowReader, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	zq, err := libc.CString(q)
	if err != nil {
		return nil, err
	}
	defer libc.Xfree(c.tls, zq)
	pst := libc.Xmalloc(c.tls, types.Size_t(unsafe.Sizeof(uintptr(0))))
	if pst == 0 {
		return nil, errors.New("sqlite: raw query: out of memory")
	}
	defer libc.Xfree(c.tls, pst)
	if rc := sqlite3.Xsqlite3_prepare_v2(c.tls, c.db, zq, -1, pst, 0); rc != sqlite3.SQLITE_OK {
		return nil, c.errorf(rc, "prepare")
	}
	r := &rawRows{c: c, ctx: ctx, st: loadPtr(pst)}
	for i, a := range args {
		if err := r.bind(int32(i+1), a); err != nil {
			r.Close()
			return nil, err
		}
	}
	r.ncol = int(sqlite3.Xsqlite3_column_count(c.tls, r.st))
	r.last = make([]string, r.ncol)
	return r, nil
}

// rawRows steps through one prepared statement of a rawConn.
type rawRows struct {
	c    *rawConn
	ctx  context.Context
	st   uintptr
	ncol int
	n    int // rows stepped
	row  bool
	err  error
	// last holds each column's last text scanned into a *string, handed out again while the
	// column repeats it: a scan in key order repeats the namespace, an edge's source and
	// type, a memory's kind and conversation, and each was a string allocated a row.
	last []string
}

func (r *rawRows) bind(i int32, a any) error {
	var rc int32
	switch v := a.(type) {
	case string:
		z, err := libc.CString(v)
		if err != nil {
			return err
		}
		rc = sqlite3.Xsqlite3_bind_text(r.c.tls, r.st, i, z, int32(len(v)), sqlite3.SQLITE_TRANSIENT)
		libc.Xfree(r.c.tls, z)
	case int64:
		rc = sqlite3.Xsqlite3_bind_int64(r.c.tls, r.st, i, v)
	case int:
		rc = sqlite3.Xsqlite3_bind_int64(r.c.tls, r.st, i, int64(v))
	default:
		return fmt.Errorf("sqlite: raw query: cannot bind %T", a)
	}
	if rc != sqlite3.SQLITE_OK {
		return r.c.errorf(rc, "bind")
	}
	return nil
}

// Next steps to the next row; false at the end, on an error (Err) or once the context is done.
func (r *rawRows) Next() bool {
	r.row = false
	if r.err != nil || r.st == 0 {
		return false
	}
	if r.n++; r.n%1024 == 0 {
		if err := r.ctx.Err(); err != nil {
			r.err = err
			return false
		}
	}
	switch rc := sqlite3.Xsqlite3_step(r.c.tls, r.st); rc {
	case sqlite3.SQLITE_ROW:
		r.row = true
		return true
	case sqlite3.SQLITE_DONE:
		return false
	default:
		r.err = r.c.errorf(rc, "step")
		return false
	}
}

func (r *rawRows) Err() error { return r.err }

func (r *rawRows) Close() error {
	if r.st != 0 {
		sqlite3.Xsqlite3_finalize(r.c.tls, r.st)
		r.st = 0
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
func (r *rawRows) Scan(dest ...any) error {
	if !r.row {
		return errors.New("sqlite: raw scan: no row")
	}
	if len(dest) != r.ncol {
		return fmt.Errorf("sqlite: raw scan: %d destinations for %d columns", len(dest), r.ncol)
	}
	tls, st := r.c.tls, r.st
	for i, d := range dest {
		col := int32(i)
		typ := sqlite3.Xsqlite3_column_type(tls, st, col)
		var err error
		switch d := d.(type) {
		case *string:
			switch typ {
			case sqlite3.SQLITE_NULL:
				err = errors.New("converting NULL to string is unsupported")
			case sqlite3.SQLITE_INTEGER:
				*d = strconv.FormatInt(sqlite3.Xsqlite3_column_int64(tls, st, col), 10)
			case sqlite3.SQLITE_FLOAT:
				*d = strconv.FormatFloat(sqlite3.Xsqlite3_column_double(tls, st, col), 'g', -1, 64)
			default:
				if b := r.bytes(col, typ); string(b) == r.last[i] {
					*d = r.last[i]
				} else {
					*d = string(b)
					r.last[i] = *d
				}
			}
		case *sql.RawBytes:
			if typ == sqlite3.SQLITE_NULL {
				*d = nil
			} else {
				*d = r.bytes(col, typ)
			}
		case intScanner:
			switch typ {
			case sqlite3.SQLITE_INTEGER, sqlite3.SQLITE_NULL:
				d.scanInt(sqlite3.Xsqlite3_column_int64(tls, st, col))
			default:
				err = d.(sql.Scanner).Scan(r.value(col, typ))
			}
		case floatScanner:
			switch typ {
			case sqlite3.SQLITE_INTEGER, sqlite3.SQLITE_FLOAT, sqlite3.SQLITE_NULL:
				d.scanFloat(sqlite3.Xsqlite3_column_double(tls, st, col))
			default:
				err = d.(sql.Scanner).Scan(r.value(col, typ))
			}
		case *int:
			if typ != sqlite3.SQLITE_INTEGER {
				err = fmt.Errorf("want an INTEGER, got type %d", typ)
			}
			*d = int(sqlite3.Xsqlite3_column_int64(tls, st, col))
		case *int64:
			if typ != sqlite3.SQLITE_INTEGER {
				err = fmt.Errorf("want an INTEGER, got type %d", typ)
			}
			*d = sqlite3.Xsqlite3_column_int64(tls, st, col)
		case *float64:
			if typ != sqlite3.SQLITE_INTEGER && typ != sqlite3.SQLITE_FLOAT {
				err = fmt.Errorf("want a REAL, got type %d", typ)
			}
			*d = sqlite3.Xsqlite3_column_double(tls, st, col)
		case sql.Scanner:
			err = d.Scan(r.value(col, typ))
		default:
			err = fmt.Errorf("unsupported destination %T", d)
		}
		if err != nil {
			return fmt.Errorf("sqlite: raw scan: column %d: %w", i, err)
		}
	}
	return nil
}

// loadPtr reads the pointer SQLite wrote at p, in its memory.
func loadPtr(p uintptr) uintptr {
	b := libc.GoBytes(p, int(unsafe.Sizeof(uintptr(0))))
	return *(*uintptr)(unsafe.Pointer(unsafe.SliceData(b)))
}

// bytes views column col's text or blob in SQLite's memory: valid until the next step.
func (r *rawRows) bytes(col, typ int32) []byte {
	var p uintptr
	if typ == sqlite3.SQLITE_BLOB {
		p = sqlite3.Xsqlite3_column_blob(r.c.tls, r.st, col)
	} else {
		p = sqlite3.Xsqlite3_column_text(r.c.tls, r.st, col)
	}
	n := int(sqlite3.Xsqlite3_column_bytes(r.c.tls, r.st, col))
	if p == 0 || n == 0 {
		return []byte{}
	}
	return libc.GoBytes(p, n)
}

// value is column col as the driver hands it to a Scanner: int64, float64, string, []byte
// (a copy) or nil.
func (r *rawRows) value(col, typ int32) any {
	switch typ {
	case sqlite3.SQLITE_INTEGER:
		return sqlite3.Xsqlite3_column_int64(r.c.tls, r.st, col)
	case sqlite3.SQLITE_FLOAT:
		return sqlite3.Xsqlite3_column_double(r.c.tls, r.st, col)
	case sqlite3.SQLITE_TEXT:
		return string(r.bytes(col, typ))
	case sqlite3.SQLITE_BLOB:
		return append([]byte(nil), r.bytes(col, typ)...)
	}
	return nil
}
