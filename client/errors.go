package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/salience-ai/salience/api"
)

// Error codes of the server's error responses (api.Error.Code).
const (
	CodeInvalid          = "invalid"                // 400: bad input; Field names it
	CodeTooLarge         = "too_large"              // 413: a body or content over its limit
	CodeUnauthorized     = "unauthorized"           // 401: no key, or an unknown one
	CodeForbidden        = "forbidden"              // 403: the key is not granted the namespace, or not admin; without keys, a foreign Host or Origin
	CodeNotFound         = "not_found"              // 404
	CodeMethodNotAllowed = "method_not_allowed"     // 405
	CodeUnsupportedMedia = "unsupported_media_type" // 415: a body that is not application/json
	CodeConflict         = "conflict"               // 409: e.g. the job is already running
	CodeDuplicate        = "duplicate"              // 409
	CodeUnavailable      = "unavailable"            // 503: loading its indexes, or a part not configured
	CodeInternal         = "internal"               // 500
)

// Error is a non-2xx answer of the server. Use errors.As to read it:
//
//	var e *client.Error
//	if errors.As(err, &e) && e.Code == client.CodeInvalid { log.Print(e.Field) }
type Error struct {
	// Status is the HTTP status.
	Status int
	// Code, Message and Field are the server's error body; Field, when set, is the JSON path
	// ("memories[3].content") or query parameter at fault. An answer that is not the
	// server's error shape (a proxy's page) gets the code of its status and its text.
	Code    string
	Message string
	Field   string
	// RequestID is the server's X-Request-ID of the request, for finding it in the logs.
	RequestID string
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "salience: %d %s: %s", e.Status, e.Code, e.Message)
	if e.Field != "" {
		fmt.Fprintf(&b, " (field %s)", e.Field)
	}
	return b.String()
}

// ErrorCode returns the server's code of err ("" when err is not an *Error).
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// codeOfStatus is the code an answer without the error shape gets.
func codeOfStatus(status int) string {
	switch status {
	case http.StatusBadRequest:
		return CodeInvalid
	case http.StatusUnauthorized:
		return CodeUnauthorized
	case http.StatusForbidden:
		return CodeForbidden
	case http.StatusNotFound:
		return CodeNotFound
	case http.StatusMethodNotAllowed:
		return CodeMethodNotAllowed
	case http.StatusConflict:
		return CodeConflict
	case http.StatusRequestEntityTooLarge:
		return CodeTooLarge
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout, http.StatusTooManyRequests:
		return CodeUnavailable
	}
	return CodeInternal
}

// errorFrom builds the Error of a non-2xx response from its body.
func errorFrom(res *http.Response, body []byte) *Error {
	e := &Error{Status: res.StatusCode, RequestID: res.Header.Get("X-Request-ID")}
	var wire api.ErrorResponse
	if json.Unmarshal(body, &wire) == nil && wire.Error.Code != "" {
		e.Code, e.Message, e.Field = wire.Error.Code, wire.Error.Message, wire.Error.Field
		return e
	}
	e.Code = codeOfStatus(res.StatusCode)
	e.Message = strings.TrimSpace(clip(string(body), 200))
	if e.Message == "" {
		e.Message = http.StatusText(res.StatusCode)
	}
	return e
}

// clip cuts s to at most n bytes without splitting a rune.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
