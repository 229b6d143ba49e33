package server

import (
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/salience-ai/salience/models"
)

// The middleware chain, in order (router.go): recover → requestLog → guardLoopback →
// requireJSON (origin.go) → authenticate → limitBody → (per group: authorizeNamespace /
// authorizeSettings / requireAdmin and requireAdminOf, requireReady) → handler.

// recoverPanics turns a panic in any later handler into a 500 with the standard error body
// and logs it with its stack. http.ErrAbortHandler is re-raised: it is net/http's way to
// abort a response on purpose.
func (s *Server) recoverPanics(c *gin.Context) {
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		if v == http.ErrAbortHandler {
			panic(v)
		}
		s.log.ErrorContext(c.Request.Context(), "panic serving request",
			"request_id", c.GetString(ctxRequestID), "method", c.Request.Method, "path", c.Request.URL.Path,
			"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		fail(c, fmt.Errorf("panic: %v", v))
	}()
	c.Next()
}

// Keys of values kept on the gin context.
const (
	ctxRequestID = "salience.request_id"
	ctxPrincipal = "salience.principal"
)

// headerRequestID carries the request id in both directions.
const headerRequestID = "X-Request-ID"

// requestLog gives every request an id (the caller's X-Request-ID when it is sane, else a
// new one), echoes it in the response, and after the request writes one structured access
// log line and the request metrics.
func (s *Server) requestLog(c *gin.Context) {
	start := time.Now()
	id := c.GetHeader(headerRequestID)
	if !validRequestID(id) {
		id = rand.Text()
	}
	c.Set(ctxRequestID, id)
	c.Header(headerRequestID, id)
	defer func() {
		// A panic passes through here on its way to recoverPanics, which answers 500: count
		// and log it as that 500, then let it go on. (The frames of the panic are still on
		// the stack, so the stack recoverPanics logs shows where it happened.)
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler {
				s.logRequest(c, id, start, http.StatusInternalServerError)
			}
			panic(v)
		}
	}()

	c.Next()
	s.logRequest(c, id, start, c.Writer.Status())
}

// logRequest writes the access log line and the metrics of a finished request.
func (s *Server) logRequest(c *gin.Context, id string, start time.Time, status int) {
	elapsed := time.Since(start)
	route := c.FullPath()
	if route == "" {
		route = "unmatched"
	}
	code := strconv.Itoa(status)
	s.metrics.requests.WithLabelValues(route, c.Request.Method, code).Inc()
	s.metrics.requestDuration.WithLabelValues(route, c.Request.Method, code).Observe(elapsed.Seconds())

	level := slog.LevelInfo
	switch {
	case status == http.StatusInternalServerError:
		level = slog.LevelError // a bug or a broken dependency: someone should look
	case route == "/healthz" || route == "/readyz" || route == "/metrics":
		level = slog.LevelDebug // probes (503 from /readyz while loading included) would drown everything else
	case status >= 500:
		level = slog.LevelWarn // 503 while loading, or a dependency down
	}
	attrs := []slog.Attr{
		slog.String("request_id", id),
		slog.String("method", c.Request.Method),
		slog.String("route", route),
		slog.String("path", c.Request.URL.Path),
		slog.Int("status", status),
		slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
		slog.Int("bytes", max(c.Writer.Size(), 0)),
		slog.String("remote", c.ClientIP()),
	}
	if p, ok := c.Get(ctxPrincipal); ok {
		attrs = append(attrs, slog.String("key", p.(*Principal).Name))
	}
	if a := errorAttr(c); a.Key != "" {
		attrs = append(attrs, a)
	}
	s.log.LogAttrs(c.Request.Context(), level, "request", attrs...)
}

// validRequestID accepts caller-chosen ids of up to 128 printable ASCII characters, so a
// header cannot inject anything odd into logs.
func validRequestID(id string) bool {
	return id != "" && len(id) <= 128 && printableASCII(id)
}

// authenticate resolves the bearer key of the request to a Principal. Without a keyring every
// request acts as the anonymous principal (the server then listens on loopback only).
// Missing or unknown keys are EUNAUTHORIZED (401); what a known key may do is checked per
// route group, as EFORBIDDEN (403).
func (s *Server) authenticate(c *gin.Context) {
	if s.keys == nil {
		c.Set(ctxPrincipal, anonymous)
		c.Next()
		return
	}
	h := c.GetHeader("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if h == "" {
		fail(c, models.Errorf(models.EUNAUTHORIZED, "missing API key: send the header \"Authorization: Bearer <key>\""))
		return
	}
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		fail(c, models.Errorf(models.EUNAUTHORIZED, "the Authorization header must be \"Bearer <key>\""))
		return
	}
	p, ok := s.keys.Lookup(strings.TrimSpace(token))
	if !ok {
		fail(c, models.Errorf(models.EUNAUTHORIZED, "unknown API key"))
		return
	}
	c.Set(ctxPrincipal, p)
	c.Next()
}

func principal(c *gin.Context) *Principal {
	if p, ok := c.Get(ctxPrincipal); ok {
		return p.(*Principal)
	}
	return nil
}

// limitBody caps request bodies at the configured size: a declared Content-Length over the
// limit is refused at once, and any other body stops being read at the limit, which the
// decoder reports as ETOOLARGE (413).
func (s *Server) limitBody(c *gin.Context) {
	if c.Request.ContentLength > s.maxBody {
		fail(c, &models.Error{Code: models.ETOOLARGE, Message: fmt.Sprintf("request body is %d bytes, over the limit of %d", c.Request.ContentLength, s.maxBody)})
		return
	}
	if c.Request.Body != nil {
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, s.maxBody)
	}
	c.Next()
}

// authorizeNamespace validates the :ns path parameter (EINVALID naming "namespace") and checks
// that the principal is granted it (EFORBIDDEN).
func (s *Server) authorizeNamespace(c *gin.Context) {
	ns := c.Param("ns")
	if err := models.ValidateNamespace(ns); err != nil {
		fail(c, err)
		return
	}
	if p := principal(c); p == nil || !p.CanAccess(ns) {
		fail(c, models.Errorf(models.EFORBIDDEN, "this API key is not granted namespace %q", ns))
		return
	}
	c.Next()
}

// requireAdmin lets admin keys through, whatever namespaces they administer; the routes
// then narrow it with requireAdminOf.
func (s *Server) requireAdmin(c *gin.Context) {
	if p := principal(c); p == nil || !p.Admin {
		fail(c, models.Errorf(models.EFORBIDDEN, "this route needs an admin API key"))
		return
	}
	c.Next()
}

// requireAdminOf lets through the admin keys of the :ns of the path (Principal.AdminOf),
// after validating it (EINVALID naming "namespace").
func (s *Server) requireAdminOf(c *gin.Context) {
	ns := c.Param("ns")
	if err := models.ValidateNamespace(ns); err != nil {
		fail(c, err)
		return
	}
	if p := principal(c); p == nil || !p.AdminOf(ns) {
		fail(c, models.Errorf(models.EFORBIDDEN, "this admin API key is not granted namespace %q", ns))
		return
	}
	c.Next()
}

// requireGlobalAdmin lets through the admin keys granted every namespace ("*"): the routes
// it guards (the jobs) act across all namespaces at once.
func (s *Server) requireGlobalAdmin(c *gin.Context) {
	if p := principal(c); p == nil || !p.AdminOf(AllNamespaces) {
		fail(c, models.Errorf(models.EFORBIDDEN, "this route acts on every namespace and needs an admin API key granted \"*\""))
		return
	}
	c.Next()
}

// requireReady answers EUNAVAILABLE (503) until the store has loaded its search indexes, so
// no caller ever sees a partial index.
func (s *Server) requireReady(c *gin.Context) {
	if !s.ready() {
		fail(c, unavailable("the server is loading its indexes; retry shortly"))
		return
	}
	c.Next()
}
