package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

// rawProbe is one row scanned into every kind of destination the loaders use.
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
}

func (p *rawProbe) dests(raw *sql.RawBytes) []any {
	return []any{&p.s, &p.sInt, &p.sReal, raw, &p.i, &p.i64, &p.f, &p.fInt,
		intDest{&p.di}, int64Dest{&p.di64}, boolDest{&p.db}, timeDest{&p.dt},
		floatDest{&p.df}, floatDest{&p.dfInt}, stringsDest{&p.ds}, jsonDest[models.Schedule]{&p.dj}, &p.sl, &p.sj}
}

const rawProbeQuery = `SELECT s, i, f, b, i, i, f, i, i, i, i, i, f, i, l, j, l, j FROM probe WHERE s >= ? ORDER BY s`

// rawTestDB creates a database at a new path with the statements of schema run, and opens
// a loadConn on it; both close with the test.
func rawTestDB(t *testing.T, schema string, args ...any) (*sql.DB, *loadConn) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "raw.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(schema, args...); err != nil {
		t.Fatal(err)
	}
	c, ok, err := openLoad(path)
	if err != nil || !ok {
		t.Fatalf("openLoad = %v, %v", ok, err)
	}
	t.Cleanup(func() { c.Close() })
	return db, c
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
		var raw sql.RawBytes
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

// TestLoadRowsScanLikeDatabaseSQL reads the same rows through database/sql and through a
// loadConn into every kind of destination, and wants the same values.
func TestLoadRowsScanLikeDatabaseSQL(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 8, time.UTC)
	db, c := rawTestDB(t, `PRAGMA journal_mode=WAL;
		CREATE TABLE probe (s TEXT, i INTEGER, f REAL, b BLOB, l TEXT, j TEXT);
		INSERT INTO probe VALUES
			('alpha', 1, 0.5, x'00ff10', '["a","b"]', '{"stability":2.5}'),
			('b€ta', -7, 1e300, x'', '', ''),
			('gamma', ?, 0.1171875, zeroblob(300), '[]', '{}'),
			('', 0, -0.0, NULL, '["z"]', ''),
			('gammb', 3, 2, x'01', '[]', '{}')`, at.UnixNano())
	want := func(arg string) []rawProbe {
		rows, err := db.Query(rawProbeQuery, arg)
		return readProbes(t, rows, err)
	}
	got := func(arg string) []rawProbe {
		rows, err := c.query(ctx, rawProbeQuery, arg)
		return readProbes(t, rows, err)
	}
	for _, arg := range []string{"", "b"} {
		w, g := want(arg), got(arg)
		if len(w) == 0 || (arg == "" && len(w) != 5) {
			t.Fatalf("database/sql read %d rows for %q", len(w), arg)
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("rows from %q:\nraw  %+v\nwant %+v", arg, g, w)
		}
	}
	if w := want(""); w[3].dt != at || w[1].ds[1] != "b" || w[2].f != 1e300 || len(w[1].raw) != 3 || w[0].raw != nil || len(w[3].raw) != 300 ||
		w[4].s != "gammb" || w[4].sl != "[]" || w[4].sj != "{}" || w[2].sj != "" {
		t.Errorf("the probe rows are not what the test meant: %+v", w)
	}
}

// TestLoadRowsErrors: what database/sql refuses, the raw reader refuses too.
func TestLoadRowsErrors(t *testing.T) {
	_, c := rawTestDB(t, `CREATE TABLE t (s TEXT, i INTEGER); INSERT INTO t VALUES (NULL, 1), ('x', 2)`)
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
		{"a destination it does not know", `SELECT i FROM t`, []any{new(uint8)}, "unsupported destination"},
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
	_, c := rawTestDB(t, `CREATE TABLE t (i INTEGER)`)
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

// TestOpenLoadOnlyOpensFiles: a path that is not a regular file is left to database/sql.
func TestOpenLoadOnlyOpensFiles(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{dir, filepath.Join(dir, "missing.db"), ":memory:"} {
		if c, ok, err := openLoad(p); ok || err != nil || c != nil {
			t.Errorf("openLoad(%q) = %v, %v, %v; want none", p, c, ok, err)
		}
	}
}
