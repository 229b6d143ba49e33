package sqlite

import "time"

// The kinds of column, each built from one accessor that returns a pointer to its field:
// the value bound and the scan destination both go through it, so they cannot disagree.
// Scan destinations are structs of one pointer, which an interface holds without
// allocating, read by stmtRows.Scan through the scanners of conn.go.

// textCol is a TEXT column holding a string field (named string types convert their
// pointer: (*string)(&m.Kind)).
func textCol[R any](name string, f func(*R) *string) column[R] {
	return column[R]{name: name, value: func(r *R) any { return *f(r) }, dest: func(r *R) any { return f(r) }}
}

// intCol is an INTEGER column holding an int field.
func intCol[R any](name string, f func(*R) *int) column[R] {
	return column[R]{name: name, value: func(r *R) any { return int64(*f(r)) }, dest: func(r *R) any { return intDest{f(r)} }}
}

// int64Col is an INTEGER column holding an int64 field.
func int64Col[R any](name string, f func(*R) *int64) column[R] {
	return column[R]{name: name, value: func(r *R) any { return *f(r) }, dest: func(r *R) any { return int64Dest{f(r)} }}
}

// floatCol is a REAL column holding a float64 field.
func floatCol[R any](name string, f func(*R) *float64) column[R] {
	return column[R]{name: name, value: func(r *R) any { return *f(r) }, dest: func(r *R) any { return floatDest{f(r)} }}
}

// boolCol is an INTEGER column holding 0 or 1.
func boolCol[R any](name string, f func(*R) *bool) column[R] {
	return column[R]{name: name, value: func(r *R) any { return int64(boolInt(*f(r))) }, dest: func(r *R) any { return boolDest{f(r)} }}
}

// timeCol is an INTEGER column of unix nanoseconds (encTime).
func timeCol[R any](name string, f func(*R) *time.Time) column[R] {
	return column[R]{name: name, value: func(r *R) any { return encTime(*f(r)) }, dest: func(r *R) any { return timeDest{f(r)} }}
}

// stringsCol is a TEXT column holding a JSON list of strings ("" for an empty list).
func stringsCol[R any](name string, f func(*R) *[]string) column[R] {
	return column[R]{name: name, value: func(r *R) any { return encStrings(*f(r)) }, dest: func(r *R) any { return stringsDest{f(r)} }}
}

// jsonCol is a TEXT column holding a field as JSON; "" when empty reports the value empty.
func jsonCol[R, T any](name string, f func(*R) *T, empty func(T) bool) column[R] {
	return column[R]{name: name, value: func(r *R) any { v := *f(r); return encJSON(v, empty(v)) },
		dest: func(r *R) any { return jsonDest[T]{f(r)} }}
}

type (
	intDest         struct{ p *int }
	int64Dest       struct{ p *int64 }
	boolDest        struct{ p *bool }
	timeDest        struct{ p *time.Time }
	floatDest       struct{ p *float64 }
	stringsDest     struct{ p *[]string }
	jsonDest[T any] struct{ p *T }
)

func (d intDest) scanInt(n int64)       { *d.p = int(n) }
func (d int64Dest) scanInt(n int64)     { *d.p = n }
func (d boolDest) scanInt(n int64)      { *d.p = n != 0 }
func (d timeDest) scanInt(n int64)      { *d.p = decTime(n) }
func (d floatDest) scanFloat(f float64) { *d.p = f }

func (d stringsDest) scanBytes(b []byte) (err error) {
	*d.p, err = decStrings(string(b), "")
	return err
}

func (d jsonDest[T]) scanBytes(b []byte) error {
	var zero T
	*d.p = zero
	return decJSON(string(b), d.p, "")
}
