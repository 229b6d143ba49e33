package testserver

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/salience-ai/salience/server"
)

// Validator is an http.RoundTripper that checks every exchange against the server's
// OpenAPI document (server/openapi.yaml). A route the document lacks must be answered 404 or
// 405. On a documented route, the response status must be one the operation lists and its
// body must match that status's schema, and a request the document calls invalid must be
// refused with a 4xx. A request the document accepts may still be refused for reasons no
// schema can say (an unknown id), with a documented status. It records the operations it
// saw, for coverage checks.
type Validator struct {
	t      testing.TB
	next   http.RoundTripper
	router routers.Router
	doc    *openapi3.T

	mu   sync.Mutex
	seen map[string]bool // "GET /v1/namespaces/{ns}/memories"
}

// NewValidator loads and validates the OpenAPI document and returns a Validator sending
// through next (http.DefaultTransport when nil). Failures are reported on t.
func NewValidator(t testing.TB, next http.RoundTripper) *Validator {
	t.Helper()
	if next == nil {
		next = http.DefaultTransport
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(server.OpenAPI())
	if err != nil {
		t.Fatalf("openapi.yaml does not load: %v", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("openapi.yaml is not a valid OpenAPI document: %v", err)
	}
	// The document names the default address; tests serve on random ports.
	doc.Servers = nil
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatalf("routing openapi.yaml: %v", err)
	}
	return &Validator{t: t, next: next, router: router, doc: doc, seen: map[string]bool{}}
}

// Operations returns every operation of the document ("GET /healthz"), sorted.
func (v *Validator) Operations() []string {
	var ops []string
	for path, item := range v.doc.Paths.Map() {
		for method := range item.Operations() {
			ops = append(ops, method+" "+path)
		}
	}
	slices.Sort(ops)
	return ops
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
