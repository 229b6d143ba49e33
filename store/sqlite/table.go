package sqlite

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Every table that holds a models type has one column list (tables.go), and every INSERT,
// UPDATE and SELECT of its rows is generated from that list when the package loads: a
// column's name, the value it binds and the field it scans into sit on one line, so adding
// a column cannot shift another's binding, and nothing counts placeholders by hand.

type scanner interface{ Scan(dest ...any) error }

// querier is what the read pool and a write transaction have in common.
type querier interface {
	QueryContext(context.Context, string, ...any) (rowReader, error)
}

// column maps one SQL column to a field of a row type R.
type column[R any] struct {
	name  string
	value func(*R) any // what an INSERT or UPDATE binds
	dest  func(*R) any // where Scan writes the column (a pointer or an sql.Scanner)
}

// table is one table's column list, in the order its SELECTs return the columns.
type table[R any] struct {
	name string
	key  []string // the primary key's columns
	cols []column[R]
	list string         // "a, b, c": what SELECT and INSERT name
	sel  string         // "SELECT <list> FROM <name>", to which readers add their WHERE
	pos  map[string]int // column name → index in cols
}

// newTable checks the list (unique names, key columns present) and generates the column
// text. A mistake panics when the package loads, so any test finds it.
func newTable[R any](name string, key []string, cols ...column[R]) *table[R] {
	t := &table[R]{name: name, key: key, cols: cols, pos: make(map[string]int, len(cols))}
	names := make([]string, len(cols))
	for i, c := range cols {
		if _, dup := t.pos[c.name]; dup {
			panic(fmt.Sprintf("sqlite: table %s lists column %s twice", name, c.name))
		}
		if c.value == nil || c.dest == nil {
			panic(fmt.Sprintf("sqlite: column %s.%s needs a value and a dest", name, c.name))
		}
		t.pos[c.name] = i
		names[i] = c.name
	}
	t.pick(key) // panics on an unknown key column
	t.list = strings.Join(names, ", ")
	t.sel = `SELECT ` + t.list + ` FROM ` + name
	return t
}

// pick returns the named columns, in the order named; it panics on an unknown name.
func (t *table[R]) pick(names []string) []column[R] {
	out := make([]column[R], len(names))
	for i, n := range names {
		p, ok := t.pos[n]
		if !ok {
			panic(fmt.Sprintf("sqlite: table %s has no column %s", t.name, n))
		}
		out[i] = t.cols[p]
	}
	return out
}

// names returns the names of every column in list order, leaving out those given.
func (t *table[R]) names(except ...string) []string {
	t.pick(except)
	var out []string
	for _, c := range t.cols {
		if !slices.Contains(except, c.name) {
			out = append(out, c.name)
		}
	}
	return out
}

// dests returns the scan destinations of every column of r, in list order.
func (t *table[R]) dests(r *R) []any {
	out := make([]any, len(t.cols))
	for i, c := range t.cols {
		out[i] = c.dest(r)
	}
	return out
}

// scan reads one row of a t.sel query into r.
func (t *table[R]) scan(sc scanner, r *R) error { return sc.Scan(t.dests(r)...) }

// statement is generated SQL with the columns whose values it binds, in placeholder order.
type statement[R any] struct {
	sql  string
	args []column[R]
}

// bind returns the statement's arguments for r.
func (st statement[R]) bind(r *R) []any {
	out := make([]any, len(st.args))
	for i, c := range st.args {
		out[i] = c.value(r)
	}
	return out
}

// insert is `INSERT INTO t (every column) VALUES (…)` followed by suffix (an ON CONFLICT
// clause or nothing).
func (t *table[R]) insert(suffix string) statement[R] {
	q := `INSERT INTO ` + t.name + ` (` + t.list + `) VALUES (` + placeholders(len(t.cols)) + `)`
	if suffix != "" {
		q += ` ` + suffix
	}
	return statement[R]{sql: q, args: t.cols}
}

// upsert inserts a row or, when its key exists, sets every other column to the new values.
func (t *table[R]) upsert() statement[R] {
	set := t.names(t.key...)
	for i, n := range set {
		set[i] = n + ` = excluded.` + n
	}
	return t.insert(`ON CONFLICT (` + strings.Join(t.key, ", ") + `) DO UPDATE SET ` + strings.Join(set, ", "))
}

// update is `UPDATE t SET <set> WHERE <where>`, every column compared with =.
func (t *table[R]) update(set, where []string) statement[R] {
	sets := make([]string, len(set))
	for i, n := range set {
		sets[i] = n + ` = ?`
	}
	conds := make([]string, len(where))
	for i, n := range where {
		conds[i] = n + ` = ?`
	}
	return statement[R]{
		sql:  `UPDATE ` + t.name + ` SET ` + strings.Join(sets, ", ") + ` WHERE ` + strings.Join(conds, " AND "),
		args: append(t.pick(set), t.pick(where)...),
	}
}

func placeholders(n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat("?, ", n-1) + "?"
}
