package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
	"zombiezen.com/go/sqlite/sqlitex"
)

// rawProbe is one row scanned into every kind of destination the store uses.
type rawProbe struct {
	s, sInt, sReal string
	sl, sj         string
	raw            []byte
	i              int
	i64            int64
	f, fInt        float64
	di             int
	di64           int64
	db             bool
	dt             time.Time
	df, dfInt      float64
	ds             []string
	dj             models.Schedule
	comp           models.Components
}

func (p *rawProbe) dests(raw *rawBytes) []any {
	return []any{&p.s, &p.sInt, &p.sReal, raw, &p.i, &p.i64, &p.f, &p.fInt,
		intDest{&p.di}, int64Dest{&p.di64}, boolDest{&p.db}, timeDest{&p.dt},
		floatDest{&p.df}, floatDest{&p.dfInt}, stringsDest{&p.ds}, jsonDest[models.Schedule]{&p.dj}, &p.sl, &p.sj,
		componentsDest{&p.comp}}
}

const rawProbeQuery = `SELECT s, i, f, b, i, i, f, i, i, i, i, i, f, i, l, j, l, j, c FROM probe WHERE s >= ? ORDER BY s`

// rawTestDB creates a database at a new path with the schema's statements run and then
// insert's, with args bound, and opens a read connection on it, closed with the test.
func rawTestDB(t *testing.T, schema, insert string, args ...any) *conn {
	t.Helper()
	path := filepath.Join(t.TempDir(), "raw.db")
	w, err := openWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := sqlitex.ExecuteScript(w.c, schema, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := w.ExecContext(ctx, insert, args...); err != nil {
		t.Fatal(err)
	}
	c, err := openReader(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// readProbes scans every row of rows into rawProbes.
func readProbes(t *testing.T, rows rowReader, err error) []rawProbe {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []rawProbe
	for rows.Next() {
		var p rawProbe
		var raw rawBytes
		if err := rows.Scan(p.dests(&raw)...); err != nil {
			t.Fatal(err)
		}
		p.raw = append([]byte(nil), raw...)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestConnScan reads rows into every kind of destination and wants the values written.
func TestConnScan(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 8, time.UTC)
	comp := models.Components{BM25: 1.5, Question: -2, Features: 3}
	c := rawTestDB(t, `CREATE TABLE probe (s TEXT, i INTEGER, f REAL, b BLOB, l TEXT, j TEXT, c BLOB)`,
		`INSERT INTO probe VALUES
			('alpha', 1, 0.5, x'00ff10', '["a","b"]', '{"stability":2.5}', ?),
			('b€ta', -7, 1e300, x'', '', '', ''),
			('gamma', ?, 0.1171875, zeroblob(300), '[]', '{}', NULL),
			('', 0, -0.0, NULL, '["z"]', '', ''),
			('gammb', 3, 2, x'01', '[]', '{}', '')`, encComponents(comp), at.UnixNano())
	rows, err := c.query(ctx, rawProbeQuery, "")
	got := readProbes(t, rows, err)
	if len(got) != 5 {
		t.Fatalf("read %d rows, want 5", len(got))
	}
	want := []rawProbe{
		{s: "", sInt: "0", sReal: "0", dt: decTime(0), ds: []string{"z"}, sl: `["z"]`},
		{s: "alpha", sInt: "1", sReal: "0.5", raw: []byte{0, 0xff, 0x10}, i: 1, i64: 1, f: 0.5, fInt: 1, di: 1, di64: 1,
			db: true, dt: decTime(1), df: 0.5, dfInt: 1, ds: []string{"a", "b"}, dj: models.Schedule{Stability: 2.5},
			sl: `["a","b"]`, sj: `{"stability":2.5}`, comp: comp},
		{s: "b€ta", sInt: "-7", sReal: "1e+300", i: -7, i64: -7, f: 1e300, fInt: -7, di: -7, di64: -7,
			db: true, dt: decTime(-7), df: 1e300, dfInt: -7},
		{s: "gamma", sInt: strconv.FormatInt(at.UnixNano(), 10), sReal: "0.1171875", raw: make([]byte, 300),
			i: int(at.UnixNano()), i64: at.UnixNano(), f: 0.1171875, fInt: float64(at.UnixNano()), di: int(at.UnixNano()),
			di64: at.UnixNano(), db: true, dt: at, df: 0.1171875, dfInt: float64(at.UnixNano()), ds: []string{}, sl: "[]", sj: "{}"},
		{s: "gammb", sInt: "3", sReal: "2", raw: []byte{1}, i: 3, i64: 3, f: 2, fInt: 3, di: 3, di64: 3, db: true,
			dt: decTime(3), df: 2, dfInt: 3, ds: []string{}, sl: "[]", sj: "{}"},
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("row %d:\ngot  %+v\nwant %+v", i, got[i], want[i])
		}
	}
	rows, err = c.query(ctx, rawProbeQuery, "b")
	if got := readProbes(t, rows, err); len(got) != 3 || got[0].s != "b€ta" {
		t.Errorf("rows from b: %+v", got)
	}
}

// TestLoadRowsErrors: what database/sql refuses, the raw reader refuses too.
func TestLoadRowsErrors(t *testing.T) {
	c := rawTestDB(t, `CREATE TABLE t (s TEXT, i INTEGER)`, `INSERT INTO t VALUES (NULL, 1), ('x', 2)`)
	scanFirst := func(q string, dest ...any) error {
		rows, err := c.query(ctx, q)
		if err != nil {
			return err
		}
		defer rows.Close()
		if !rows.Next() {
			return fmt.Errorf("no row: %v", rows.Err())
		}
		return rows.Scan(dest...)
	}
	var s string
	var i int
	for _, tc := range []struct {
		name, q string
		dest    []any
		want    string
	}{
		{"NULL into a string", `SELECT s FROM t ORDER BY i`, []any{&s}, "NULL"},
		{"text into an int", `SELECT s FROM t WHERE i = 2`, []any{&i}, "want an INTEGER"},
		{"text into an intDest", `SELECT s FROM t WHERE i = 2`, []any{intDest{&i}}, "want an INTEGER"},
		{"too few destinations", `SELECT s, i FROM t`, []any{&s}, "1 destinations for 2 columns"},
		{"a destination it does not know", `SELECT i FROM t`, []any{new(uint8)}, "cannot scan SQLITE_INTEGER into *uint8"},
		{"bad SQL", `SELECT nope FROM t`, nil, "no such column"},
	} {
		if err := scanFirst(tc.q, tc.dest...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	rows, err := c.query(ctx, `SELECT i FROM t`)
	if err != nil {
		t.Fatal(err)
	}
	if err := rows.Scan(&i); err == nil || !strings.Contains(err.Error(), "no row") {
		t.Errorf("Scan before Next: err = %v", err)
	}
	rows.Close()
	if rows.Next() {
		t.Error("Next after Close = true")
	}
}

// TestLoadRowsStopWithTheContext: a long scan ends with the context's error once it is done,
// within 1,024 rows.
func TestLoadRowsStopWithTheContext(t *testing.T) {
	c := rawTestDB(t, `CREATE TABLE t (i INTEGER)`, `SELECT 1`)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rows, err := c.query(cctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n) SELECT i FROM n`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		if n++; n == 5000 {
			cancel()
		}
	}
	if !errors.Is(rows.Err(), context.Canceled) || n < 5000 || n > 5000+1024 {
		t.Errorf("after cancelling at row 5000: %d rows, err %v", n, rows.Err())
	}
	if _, err := c.query(cctx, `SELECT 1`); !errors.Is(err, context.Canceled) {
		t.Errorf("query with a done context: err = %v", err)
	}
}

// TestReadsAfterClose: a read of a closed store fails at once, as a write does, instead of
// waiting for a pooled connection that will never come back.
func TestReadsAfterClose(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "salience.db"), Options{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetState(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	if v, err := s.GetState(ctx, "k"); err != nil || v != "v" {
		t.Fatalf("GetState before Close = %q, %v", v, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.GetState(ctx, "k")
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "closed") {
			t.Errorf("GetState after Close: %v, want the store is closed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("GetState after Close still waits after 5 s")
	}
	if err := s.SetState(ctx, "k", "w"); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("SetState after Close: %v, want the store is closed", err)
	}
}
