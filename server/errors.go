package server

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/models"
)

// The error codes the server adds to the models codes, for what only HTTP can get wrong.
const (
	codeMethodNotAllowed     = "method_not_allowed"     // a known path asked with a method it does not serve
	codeUnsupportedMediaType = "unsupported_media_type" // a body that is not application/json
)

// statusOf is the one table from error codes to HTTP statuses. Handlers never choose an
// error status; they hand the error to fail, which looks its code up here.
var statusOf = map[string]int{
	models.EINVALID:          http.StatusBadRequest,
	models.ETOOLARGE:         http.StatusRequestEntityTooLarge,
	models.EUNAUTHORIZED:     http.StatusUnauthorized,
	models.EFORBIDDEN:        http.StatusForbidden,
	models.ENOTFOUND:         http.StatusNotFound,
	codeMethodNotAllowed:     http.StatusMethodNotAllowed,
	codeUnsupportedMediaType: http.StatusUnsupportedMediaType,
	models.ECONFLICT:         http.StatusConflict,
	models.EDUPLICATE:        http.StatusConflict,
	models.EUNAVAILABLE:      http.StatusServiceUnavailable,
	models.EINTERNAL:         http.StatusInternalServerError,
}

// errorStatus returns the HTTP status of an error code; unknown codes are internal errors.
func errorStatus(code string) int {
	if s, ok := statusOf[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Generic messages of the codes whose own messages stay in the log.
const (
	msgInternal    = "internal error"
	msgUnavailable = "the service is temporarily unavailable; retry shortly"
)

// errorBody returns the wire form of err. Internal errors (and errors of unknown codes) get a
// generic message, so a driver's or a bug's text never reaches a caller; so do unavailable
// errors, whose messages usually describe a dependency (an embedder's URL, a file path, a
// driver's error), unless the error is marked Safe. The full error goes to the access log
// with the request id (fail keeps it on the context).
func errorBody(err error) (int, api.ErrorResponse) {
	code := models.ErrorCode(err)
	status := errorStatus(code)
	if status == http.StatusInternalServerError {
		return status, api.ErrorResponse{Error: api.Error{Code: models.EINTERNAL, Message: msgInternal}}
	}
	msg := models.ErrorMessage(err)
	if code == models.EUNAVAILABLE && !isSafe(err) {
		msg = msgUnavailable
	}
	return status, api.ErrorResponse{Error: api.Error{
		Code:    code,
		Message: msg,
		Field:   models.ErrorField(err),
	}}
}

// isSafe reports whether err's message was written for callers.
func isSafe(err error) bool {
	var e *models.Error
	return errors.As(err, &e) && e.Safe
}

// unavailable is an EUNAVAILABLE error whose message the server wrote for callers.
func unavailable(format string, args ...any) *models.Error {
	e := models.Errorf(models.EUNAVAILABLE, format, args...)
	e.Safe = true
	return e
}

// fail ends the request with err rendered through the status table. The error is kept on the
// gin context, so the access log records it (with its full text for internal errors).
func fail(c *gin.Context, err error) {
	status, body := errorBody(err)
	_ = c.Error(err)
	if status == http.StatusUnauthorized {
		c.Header("WWW-Authenticate", `Bearer realm="salience"`)
	}
	if status == http.StatusServiceUnavailable {
		c.Header("Retry-After", "1")
	}
	if c.Writer.Written() {
		c.Abort()
		return
	}
	c.AbortWithStatusJSON(status, body)
}

// errorAttr is the slog attribute of a request's errors, empty when there are none.
func errorAttr(c *gin.Context) slog.Attr {
	if len(c.Errors) == 0 {
		return slog.Attr{}
	}
	return slog.String("error", c.Errors.Last().Err.Error())
}
