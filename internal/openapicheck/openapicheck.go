// Package openapicheck validates HTTP exchanges against an OpenAPI document with
// kin-openapi, for tests. It imports nothing of Salience, so the server's own tests can use
// it (internal/testserver, which the clients' tests use, imports the server).
package openapicheck

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// Document is a loaded, valid OpenAPI document and its router. It is read-only once
// loaded, so one Document serves any number of Validators.
type Document struct {
	doc    *openapi3.T
	router routers.Router
}

// Load parses and validates an OpenAPI document (YAML or JSON). Its servers are dropped:
// the document names the default address, tests serve anywhere.
func Load(data []byte) (*Document, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("the OpenAPI document does not load: %w", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("not a valid OpenAPI document: %w", err)
	}
	doc.Servers = nil
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("routing the OpenAPI document: %w", err)
	}
	return &Document{doc: doc, router: router}, nil
}

// Operations returns every operation of the document ("GET /healthz"), sorted.
func (d *Document) Operations() []string {
	var ops []string
	for path, item := range d.doc.Paths.Map() {
		for method := range item.Operations() {
			ops = append(ops, method+" "+path)
		}
	}
	slices.Sort(ops)
	return ops
}

// Validator is an http.RoundTripper that checks every exchange against an OpenAPI
// document. A route the document lacks must be answered 404 or 405. On a documented route,
// the response status must be one the operation lists and its body must match that status's
// schema, and a request the document calls invalid must be refused with a 4xx. A request the
// document accepts may still be refused for reasons no schema can say (an unknown id), with
// a documented status. It records the operations it saw, for coverage checks. Failures are
// reported on the test it was made for.
type Validator struct {
	*Document
	t    testing.TB
	next http.RoundTripper

	mu   sync.Mutex
	seen map[string]bool // "GET /v1/namespaces/{ns}/memories"
}

// New loads the document (failing t if it is not valid) and returns a Validator over it.
func New(t testing.TB, doc []byte, next http.RoundTripper) *Validator {
	t.Helper()
	d, err := Load(doc)
	if err != nil {
		t.Fatal(err)
	}
	return d.Validator(t, next)
}

// Validator returns a Validator sending through next (http.DefaultTransport when nil) and
// reporting on t.
func (d *Document) Validator(t testing.TB, next http.RoundTripper) *Validator {
	if next == nil {
		next = http.DefaultTransport
	}
	return &Validator{Document: d, t: t, next: next, seen: map[string]bool{}}
}

// Recorder is a testing.TB that keeps what a Validator reports instead of failing the test,
// for tests of the checks themselves.
type Recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

// Helper does nothing: the reports are kept, not printed.
func (r *Recorder) Helper() {}

// Errorf keeps a report.
func (r *Recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// Expect fails t unless the reports kept say want ("" = no report at all).
func (r *Recorder) Expect(t testing.TB, want string) {
	t.Helper()
	r.mu.Lock()
	got := strings.Join(r.errs, "\n")
	r.mu.Unlock()
	switch {
	case want == "" && got != "":
		t.Errorf("the validator reported a conforming exchange: %s", got)
	case want != "" && !strings.Contains(got, want):
		t.Errorf("the validator reported %q, want a report saying %q", got, want)
	}
}

// Handler is an http.RoundTripper that serves each request with an http.Handler in
// process, for validating a handler without a listener.
type Handler struct{ http.Handler }

// RoundTrip serves req with the handler and returns what it wrote.
func (h Handler) RoundTrip(req *http.Request) (*http.Response, error) {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w.Result(), nil
}

// Seen returns the operations the validator has seen, sorted.
func (v *Validator) Seen() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	var ops []string
	for op := range v.seen {
		ops = append(ops, op)
	}
	slices.Sort(ops)
	return ops
}

// RoundTrip sends req and validates the exchange.
func (v *Validator) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		req.Body.Close()
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	route, params, err := v.router.FindRoute(req)
	if err != nil {
		// An undocumented route must not exist: the server must answer 404 or 405.
		res, rerr := v.next.RoundTrip(req)
		if rerr == nil && res.StatusCode != http.StatusNotFound && res.StatusCode != http.StatusMethodNotAllowed {
			v.t.Errorf("openapi: %s %s is not documented (%v), yet the server answered %d", req.Method, req.URL.Path, err, res.StatusCode)
		}
		return res, rerr
	}
	v.mu.Lock()
	v.seen[req.Method+" "+route.Path] = true
	v.mu.Unlock()

	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true}
	check := req.Clone(context.WithoutCancel(req.Context()))
	check.Body = io.NopCloser(bytes.NewReader(body))
	in := &openapi3filter.RequestValidationInput{Request: check, PathParams: params, Route: route, Options: opts}
	reqErr := openapi3filter.ValidateRequest(req.Context(), in)

	req.Body = io.NopCloser(bytes.NewReader(body))
	res, err := v.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	rbody, err := io.ReadAll(res.Body)
	res.Body.Close()
	res.Body = io.NopCloser(bytes.NewReader(rbody))
	if err != nil {
		return res, nil
	}
	what := fmt.Sprintf("%s %s", req.Method, req.URL.RequestURI())
	if reqErr != nil && (res.StatusCode < 400 || res.StatusCode > 499) {
		v.t.Errorf("openapi: %s: the document calls the request invalid (%v) but the server answered %d %s", what, reqErr, res.StatusCode, clip(rbody))
	}
	ropts := *opts
	// Only JSON bodies have schemas worth checking; kin-openapi would parse a YAML or text
	// body (the document itself, the Prometheus text) into structures no string schema fits.
	// Their content type is still checked against the document.
	if !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		ropts.ExcludeResponseBody = true
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: res.StatusCode, Header: res.Header,
		Body: io.NopCloser(bytes.NewReader(rbody)), Options: &ropts}
	if err := openapi3filter.ValidateResponse(req.Context(), out); err != nil {
		v.t.Errorf("openapi: %s: the %d response does not match the document: %v\nbody: %s", what, res.StatusCode, err, clip(rbody))
	}
	return res, nil
}

func clip(b []byte) []byte {
	if len(b) > 600 {
		return append(b[:600:600], "…"...)
	}
	return b
}
