package sqlite

import (
	"fmt"
	"time"
)

// The kinds of column, each built from one accessor that returns a pointer to its field:
// the value bound and the scan destination both go through it, so they cannot disagree.
// Scan destinations are structs of one pointer, which an interface holds without
// allocating, and decode the driver's value (int64, float64, string, []byte or nil) without
// the reflection database/sql uses for *int and *float64.

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

type intDest struct{ p *int }

func (d intDest) Scan(src any) error {
	n, err := srcInt(src)
	*d.p = int(n)
	return err
}

func (d intDest) scanInt(n int64) { *d.p = int(n) }

type int64Dest struct{ p *int64 }

func (d int64Dest) scanInt(n int64) { *d.p = n }

func (d int64Dest) Scan(src any) error {
	n, err := srcInt(src)
	*d.p = n
	return err
}

type boolDest struct{ p *bool }

func (d boolDest) Scan(src any) error {
	n, err := srcInt(src)
	*d.p = n != 0
	return err
}

func (d boolDest) scanInt(n int64) { *d.p = n != 0 }

type timeDest struct{ p *time.Time }

func (d timeDest) scanInt(n int64) { *d.p = decTime(n) }

func (d timeDest) Scan(src any) error {
	n, err := srcInt(src)
	*d.p = decTime(n)
	return err
}

type floatDest struct{ p *float64 }

func (d floatDest) scanFloat(f float64) { *d.p = f }

func (d floatDest) Scan(src any) error {
	switch v := src.(type) {
	case float64:
		*d.p = v
	case int64: // SQLite may hand back an integral REAL as an integer
		*d.p = float64(v)
	case nil:
		*d.p = 0
	default:
		return fmt.Errorf("want a REAL, got %T", src)
	}
	return nil
}

type stringsDest struct{ p *[]string }

func (d stringsDest) Scan(src any) error {
	s, err := srcText(src)
	if err != nil {
		return err
	}
	*d.p, err = decStrings(s, "")
	return err
}

type jsonDest[T any] struct{ p *T }

func (d jsonDest[T]) Scan(src any) error {
	s, err := srcText(src)
	if err != nil {
		return err
	}
	var zero T
	*d.p = zero
	return decJSON(s, d.p, "")
}

func srcInt(src any) (int64, error) {
	switch v := src.(type) {
	case int64:
		return v, nil
	case nil:
		return 0, nil
	}
	return 0, fmt.Errorf("want an INTEGER, got %T", src)
}

func srcText(src any) (string, error) {
	switch v := src.(type) {
	case string:
		return v, nil
	case []byte:
		return string(v), nil
	case nil:
		return "", nil
	}
	return "", fmt.Errorf("want TEXT, got %T", src)
}
