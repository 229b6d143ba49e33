// Package models holds Salience's domain types, their validation, the error codes every layer
// speaks, and the store contract that each store implements. It imports only the standard
// library.
package models

import (
	"errors"
	"fmt"
)

// Error codes. One table in the server maps them to HTTP statuses; stores translate their
// drivers' errors to these at their boundary.
const (
	ECONFLICT     = "conflict"     // the object exists or changed under us
	EINTERNAL     = "internal"     // a bug or an unexpected failure; never details to users
	EINVALID      = "invalid"      // bad input; Field names the culprit
	ENOTFOUND     = "not_found"    // no such object in this namespace
	EUNAUTHORIZED = "unauthorized" // no or unknown credentials
	EFORBIDDEN    = "forbidden"    // credentials valid, not for this namespace or route
	ETOOLARGE     = "too_large"    // a body or field over its limit
	EUNAVAILABLE  = "unavailable"  // not ready yet, or a dependency is down
	EDUPLICATE    = "duplicate"    // an idempotent replay: nothing changed
)

// Error is Salience's application error. Code is one of the E* constants; Message is safe to
// show a caller; Field, when set, names the input field at fault (JSON path, e.g. "items[3].content").
type Error struct {
	Code    string
	Message string
	Field   string
	// Safe marks Message as written for callers even for the codes whose messages the
	// server otherwise replaces with a generic text (EUNAVAILABLE, EINTERNAL), because
	// those usually carry a dependency's address or a driver's error.
	Safe bool
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("salience: %s: %s (field %s)", e.Code, e.Message, e.Field)
	}
	return fmt.Sprintf("salience: %s: %s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns an EINVALID error naming field.
func Invalid(field, format string, args ...any) *Error {
	return &Error{Code: EINVALID, Field: field, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL for any other
// non-nil error, and "" for nil. Unexpected errors therefore never leak as user errors.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the user-safe message of err: the *Error's message, or a generic text.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}

// ErrorField returns the field named by err, if any.
func ErrorField(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Field
	}
	return ""
}

// WithFieldPrefix returns err with its Field prefixed by prefix (e.g. "items[2]."), for
// errors of batch items. Errors without a field get prefix without the trailing dot.
func WithFieldPrefix(err error, prefix string) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	c := *e
	switch {
	case c.Field == "":
		c.Field = trimDot(prefix)
	default:
		c.Field = prefix + c.Field
	}
	return &c
}

func trimDot(s string) string {
	if len(s) > 0 && s[len(s)-1] == '.' {
		return s[:len(s)-1]
	}
	return s
}
