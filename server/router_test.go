package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/internal/openapicheck"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/recall"
)

// The tests here exercise the middleware chain and the error shape. Where a handler must
// fail, a test double injects the fault; the end-to-end tests in internal/app run the real
// services behind the same router.

// panicRecaller panics, to prove the recovery middleware.
type panicRecaller struct{}

func (panicRecaller) Recall(context.Context, *recall.Request) (*recall.Response, error) {
	panic("boom in recall")
}

// brokenStore fails every call with a driver-like error, to prove internal errors stay generic.
type brokenStore struct{}

func (brokenStore) GetMemory(context.Context, string, string) (*models.Memory, error) {
	return nil, errors.New("sql: database disk image is malformed")
}
func (brokenStore) FindMemories(context.Context, models.MemoryFilter) ([]*models.Memory, int, error) {
	return nil, 0, errors.New("sql: database disk image is malformed")
}
func (brokenStore) DeleteMemory(context.Context, string, string) error {
	return errors.New("sql: database disk image is malformed")
}
func (brokenStore) DeleteNamespace(context.Context, string) (models.NamespaceDeleted, error) {
	return models.NamespaceDeleted{}, errors.New("sql: database disk image is malformed")
}
func (brokenStore) Namespaces(context.Context) ([]string, error) {
	return nil, errors.New("sql: database disk image is malformed")
}
func (brokenStore) Embedders(context.Context) (map[string]models.EmbedderIdentity, error) {
	return nil, errors.New("sql: database disk image is malformed")
}

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newTestServer(t *testing.T, cfg Config) (*Server, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return New(cfg), logs
}

// openAPI is the server's OpenAPI document, loaded once for every test's validator.
var openAPI = sync.OnceValues(func() (*openapicheck.Document, error) { return openapicheck.Load(OpenAPI()) })

// do sends one request to h and returns the response with its body read. The exchange is
// validated against openapi.yaml (openapicheck.Validator): an undocumented route must be
// 404 or 405, a documented one must answer a documented status with a body matching its
// schema, and a request the document calls invalid must be refused with a 4xx. A body is
// sent as JSON unless a Content-Type header says otherwise, to Host localhost unless a
// "Host" header says otherwise (a server without keys answers loopback Hosts only).
func do(t testing.TB, h http.Handler, method, path, body string, header ...string) (*http.Response, []byte) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := newRequest(method, path, r)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		if strings.EqualFold(header[i], "Host") {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	return send(t, h, req)
}

// newRequest is httptest.NewRequest to Host localhost (httptest's own default,
// example.com, is a foreign Host that a server without keys refuses).
func newRequest(method, path string, body io.Reader) *http.Request {
	req := httptest.NewRequest(method, path, body)
	req.Host = "localhost"
	return req
}

// send serves req with h through the OpenAPI validator and returns the response with its
// body read.
func send(t testing.TB, h http.Handler, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	doc, err := openAPI()
	if err != nil {
		t.Fatal(err)
	}
	res, err := doc.Validator(t, openapicheck.Handler{Handler: h}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	return res, b
}

// TestDoValidatesAgainstOpenAPI shows the helper every test here sends through holds the
// exchange to openapi.yaml: a handler answering off the document is reported.
func TestDoValidatesAgainstOpenAPI(t *testing.T) {
	answer := func(status int, body string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			io.WriteString(w, body)
		})
	}
	for _, tc := range []struct {
		name, method, path, body string
		h                        http.Handler
		want                     string
	}{
		{"conforming", "GET", "/healthz", "", answer(200, `{"status":"ok"}`), ""},
		{"body off its schema", "GET", "/healthz", "", answer(200, `{"status":"fine"}`), "does not match the document"},
		{"undocumented status", "GET", "/healthz", "", answer(418, `{}`), "does not match the document"},
		{"undocumented route served", "GET", "/v1/secret", "", answer(200, `{}`), "is not documented"},
		{"invalid request accepted", "POST", "/v1/namespaces/a/recall", `{"mode":"psychic"}`, answer(200, `{}`), "calls the request invalid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &openapicheck.Recorder{TB: t}
			do(r, tc.h, tc.method, tc.path, tc.body)
			r.Expect(t, tc.want)
		})
	}
}

// errorOf decodes an error body, failing the test when the body is not the error shape.
func errorOf(t *testing.T, body []byte) api.Error {
	t.Helper()
	var e api.ErrorResponse
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
		t.Fatalf("body %q is not the error shape (%v)", body, err)
	}
	return e.Error
}

func TestNoRouteAndNoMethodUseTheErrorShape(t *testing.T) {
	s, _ := newTestServer(t, Config{})
	res, body := do(t, s.Handler(), "GET", "/v2/nothing", "")
	if res.StatusCode != 404 || errorOf(t, body).Code != "not_found" {
		t.Errorf("GET /v2/nothing = %d %s", res.StatusCode, body)
	}
	res, body = do(t, s.Handler(), "PUT", "/healthz", "")
	if res.StatusCode != 405 || errorOf(t, body).Code != "method_not_allowed" {
		t.Errorf("PUT /healthz = %d %s", res.StatusCode, body)
	}
}

func TestPanicBecomes500AndIsLoggedWithStack(t *testing.T) {
	s, logs := newTestServer(t, Config{Recaller: panicRecaller{}})
	res, body := do(t, s.Handler(), "POST", "/v1/namespaces/a/recall", `{"query":"x"}`)
	if res.StatusCode != 500 {
		t.Fatalf("status = %d, want 500", res.StatusCode)
	}
	if e := errorOf(t, body); e.Code != "internal" || e.Message != "internal error" {
		t.Errorf("error = %+v, want a generic internal error", e)
	}
	out := logs.String()
	for _, want := range []string{"panic serving request", "boom in recall", "stack=", "panicRecaller.Recall",
		"msg=request", "status=500", "route=/v1/namespaces/:ns/recall"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	// The server keeps serving after a panic, and counted it as a 500.
	if res, _ := do(t, s.Handler(), "GET", "/healthz", ""); res.StatusCode != 200 {
		t.Errorf("healthz after panic = %d", res.StatusCode)
	}
	_, metrics := do(t, s.Handler(), "GET", "/metrics", "")
	if want := `salience_http_requests_total{code="500",method="POST",route="/v1/namespaces/:ns/recall"} 1`; !strings.Contains(string(metrics), want) {
		t.Errorf("metrics lack %q", want)
	}
}

func TestInternalErrorsAreGenericButLogged(t *testing.T) {
	s, logs := newTestServer(t, Config{Memories: brokenStore{}, Namespaces: brokenStore{}})
	for _, path := range []string{"/v1/namespaces/a/memories", "/v1/namespaces/a/memories/01J000", "/v1/admin/namespaces"} {
		res, body := do(t, s.Handler(), "GET", path, "")
		if e := errorOf(t, body); res.StatusCode != 500 || e.Code != "internal" || e.Message != "internal error" || strings.Contains(string(body), "sql") {
			t.Errorf("GET %s = %d %s, want a generic 500", path, res.StatusCode, body)
		}
	}
	if !strings.Contains(logs.String(), "database disk image is malformed") {
		t.Errorf("the cause is not logged:\n%s", logs.String())
	}
}

func TestRequestID(t *testing.T) {
	s, logs := newTestServer(t, Config{})
	res, _ := do(t, s.Handler(), "GET", "/healthz", "", "X-Request-ID", "req-123")
	if got := res.Header.Get("X-Request-ID"); got != "req-123" {
		t.Errorf("echoed id = %q, want req-123", got)
	}
	if !strings.Contains(logs.String(), "request_id=req-123") {
		t.Errorf("access log lacks the request id:\n%s", logs.String())
	}
	res, _ = do(t, s.Handler(), "GET", "/healthz", "")
	generated := res.Header.Get("X-Request-ID")
	if len(generated) != 26 {
		t.Errorf("generated id = %q, want 26 characters", generated)
	}
	res, _ = do(t, s.Handler(), "GET", "/healthz", "", "X-Request-ID", "evil\x7fid")
	if got := res.Header.Get("X-Request-ID"); got == "evil\x7fid" || len(got) != 26 {
		t.Errorf("an unprintable id was kept: %q", got)
	}
}

func TestBodyLimit(t *testing.T) {
	s, _ := newTestServer(t, Config{MaxBodyBytes: 64})
	big := `{"kind":"fact","content":"` + strings.Repeat("x", 100) + `"}`
	// Declared length over the limit: refused before reading.
	res, body := do(t, s.Handler(), "POST", "/v1/namespaces/a/memories", big)
	if res.StatusCode != 413 || errorOf(t, body).Code != "too_large" {
		t.Errorf("declared oversize = %d %s", res.StatusCode, body)
	}
	// Unknown length (chunked): cut off while reading.
	req := newRequest("POST", "/v1/namespaces/a/recall", io.MultiReader(strings.NewReader(big)))
	req.ContentLength = -1
	req.Header.Set("Content-Type", "application/json")
	res, body = send(t, s.Handler(), req)
	if res.StatusCode != 413 || errorOf(t, body).Code != "too_large" {
		t.Errorf("streamed oversize = %d %s", res.StatusCode, body)
	}
}

func TestReadiness(t *testing.T) {
	ready := false
	s, _ := newTestServer(t, Config{Ready: func() bool { return ready }})
	if res, body := do(t, s.Handler(), "GET", "/readyz", ""); res.StatusCode != 503 || errorOf(t, body).Code != "unavailable" {
		t.Errorf("readyz while loading = %d %s", res.StatusCode, body)
	}
	if res, _ := do(t, s.Handler(), "GET", "/healthz", ""); res.StatusCode != 200 {
		t.Errorf("healthz while loading = %d", res.StatusCode)
	}
	if res, body := do(t, s.Handler(), "GET", "/v1/namespaces/a/memories", ""); res.StatusCode != 503 || res.Header.Get("Retry-After") == "" {
		t.Errorf("API while loading = %d %s, want 503 with Retry-After", res.StatusCode, body)
	}
	ready = true
	res, body := do(t, s.Handler(), "GET", "/readyz", "")
	if res.StatusCode != 200 || string(body) != `{"status":"ready"}` {
		t.Errorf("readyz when ready = %d %s", res.StatusCode, body)
	}
}

func TestHealthz(t *testing.T) {
	s, _ := newTestServer(t, Config{})
	res, body := do(t, s.Handler(), "GET", "/healthz", "")
	if res.StatusCode != 200 || string(body) != `{"status":"ok"}` {
		t.Errorf("healthz = %d %s", res.StatusCode, body)
	}
}

func TestBadNamespaceNamesTheField(t *testing.T) {
	s, _ := newTestServer(t, Config{})
	for _, path := range []string{"/v1/namespaces/-a/memories", "/v1/namespaces/" + strings.Repeat("a", 65) + "/recall", "/v1/namespaces/a%20b/memories"} {
		method := "GET"
		if strings.HasSuffix(path, "recall") {
			method = "POST"
		}
		res, body := do(t, s.Handler(), method, path, "{}")
		if e := errorOf(t, body); res.StatusCode != 400 || e.Field != "namespace" {
			t.Errorf("%s %s = %d %s, want 400 naming namespace", method, path, res.StatusCode, body)
		}
	}
}

// TestAuthorizationDenials runs every registered route with no key, a malformed header, an
// unknown key, a key of another namespace and a non-admin key, and checks the 401/403 split.
// (Granted requests are covered end to end in internal/app, over the real services.)
func TestAuthorizationDenials(t *testing.T) {
	keys, err := ParseKeys([]byte(`{"keys":[
		{"key":"sk-tenant-a-0000000","namespaces":["a"]},
		{"key":"sk-admin-000000000","namespaces":["*"],"admin":true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	s, _ := newTestServer(t, Config{Keys: keys})
	open := map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true, "/openapi.yaml": true}
	for _, r := range s.Routes() {
		path := strings.NewReplacer(":ns", "b", ":id", "01J00000000000000000000000").Replace(r.Path)
		t.Run(r.Method+" "+r.Path, func(t *testing.T) {
			if open[r.Path] {
				if res, _ := do(t, s.Handler(), r.Method, path, ""); res.StatusCode != 200 {
					t.Errorf("open route = %d, want 200 without a key", res.StatusCode)
				}
				return
			}
			cases := []struct {
				name   string
				header []string
				status int
				code   string
			}{
				{"no key", nil, 401, "unauthorized"},
				{"basic auth", []string{"Authorization", "Basic c2stdGVuYW50LWEtMDAwMDAwMA=="}, 401, "unauthorized"},
				{"empty bearer", []string{"Authorization", "Bearer "}, 401, "unauthorized"},
				{"unknown key", []string{"Authorization", "Bearer sk-tenant-a-0000001"}, 401, "unauthorized"},
			}
			if strings.Contains(r.Path, ":ns") {
				cases = append(cases, struct {
					name   string
					header []string
					status int
					code   string
				}{"other namespace", []string{"Authorization", "Bearer sk-tenant-a-0000000"}, 403, "forbidden"})
			}
			if strings.HasPrefix(r.Path, "/v1/admin") {
				cases = append(cases, struct {
					name   string
					header []string
					status int
					code   string
				}{"not admin", []string{"Authorization", "Bearer sk-tenant-a-0000000"}, 403, "forbidden"})
			}
			for _, c := range cases {
				res, body := do(t, s.Handler(), r.Method, path, `{}`, c.header...)
				if res.StatusCode != c.status || errorOf(t, body).Code != c.code {
					t.Errorf("%s: %d %s, want %d %s", c.name, res.StatusCode, body, c.status, c.code)
				}
				if c.status == 401 && res.Header.Get("WWW-Authenticate") == "" {
					t.Errorf("%s: 401 without WWW-Authenticate", c.name)
				}
			}
		})
	}
}

func TestMetrics(t *testing.T) {
	s, _ := newTestServer(t, Config{})
	do(t, s.Handler(), "GET", "/healthz", "")
	do(t, s.Handler(), "GET", "/nowhere", "")
	res, body := do(t, s.Handler(), "GET", "/metrics", "")
	if res.StatusCode != 200 {
		t.Fatalf("metrics = %d", res.StatusCode)
	}
	for _, want := range []string{
		`salience_http_requests_total{code="200",method="GET",route="/healthz"} 1`,
		`salience_http_requests_total{code="404",method="GET",route="unmatched"} 1`,
		`salience_http_request_duration_seconds_bucket{code="200",method="GET",route="/healthz",le="0.0005"}`,
		"salience_memories_ingested_total 0",
		"go_goroutines",
		"process_cpu_seconds_total",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// TestOpenAPICoversEveryRoute checks the hand-written document against the router, both ways.
func TestOpenAPICoversEveryRoute(t *testing.T) {
	var doc struct {
		OpenAPI string                    `yaml:"openapi"`
		Paths   map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(OpenAPI(), &doc); err != nil {
		t.Fatalf("openapi.yaml does not parse: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Errorf("openapi = %q, want 3.x", doc.OpenAPI)
	}
	s, _ := newTestServer(t, Config{})
	registered := map[string]bool{}
	for _, r := range s.Routes() {
		path := strings.NewReplacer(":ns", "{ns}", ":id", "{id}", ":name", "{name}").Replace(r.Path)
		method := strings.ToLower(r.Method)
		registered[method+" "+path] = true
		if _, ok := doc.Paths[path][method]; !ok {
			t.Errorf("route %s %s is missing from openapi.yaml", r.Method, path)
		}
	}
	for path, ops := range doc.Paths {
		for method := range ops {
			if method == "parameters" {
				continue
			}
			if !registered[method+" "+path] {
				t.Errorf("openapi.yaml documents %s %s, which is not registered", method, path)
			}
		}
	}
	res, body := do(t, s.Handler(), "GET", "/openapi.yaml", "")
	if res.StatusCode != 200 || !bytes.Equal(body, OpenAPI()) || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/yaml") {
		t.Errorf("GET /openapi.yaml = %d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
}

// forgettingRecaller records which namespaces it was asked to forget.
type forgettingRecaller struct {
	panicRecaller
	forgot []string
}

func (f *forgettingRecaller) Forget(ns string) { f.forgot = append(f.forgot, ns) }

// deletingStore deletes any namespace, reporting one memory.
type deletingStore struct{ brokenStore }

func (deletingStore) DeleteNamespace(context.Context, string) (models.NamespaceDeleted, error) {
	return models.NamespaceDeleted{Memories: 1, Records: 2}, nil
}

// TestDeleteNamespaceForgetsTheRecallersCaches: the delete route tells a recaller that
// caches per namespace (recall.Pipeline's prediction models) to drop that namespace, once it
// is deleted, and not when the delete fails.
func TestDeleteNamespaceForgetsTheRecallersCaches(t *testing.T) {
	r := &forgettingRecaller{}
	s, _ := newTestServer(t, Config{Recaller: r, Namespaces: deletingStore{}})
	res, body := do(t, s.Handler(), "DELETE", "/v1/admin/namespaces/gone", "")
	if res.StatusCode != 200 || !strings.Contains(string(body), `"memories":1`) {
		t.Fatalf("delete = %d %s", res.StatusCode, body)
	}
	if !slices.Equal(r.forgot, []string{"gone"}) {
		t.Errorf("forgot %v, want [gone]", r.forgot)
	}
	r = &forgettingRecaller{}
	s, _ = newTestServer(t, Config{Recaller: r, Namespaces: brokenStore{}})
	if res, _ := do(t, s.Handler(), "DELETE", "/v1/admin/namespaces/gone", ""); res.StatusCode != 500 || len(r.forgot) != 0 {
		t.Errorf("failed delete: %d, forgot %v", res.StatusCode, r.forgot)
	}
}

// embeddersStore lists two namespaces, one of them with vectors.
type embeddersStore struct{ brokenStore }

func (embeddersStore) Namespaces(context.Context) ([]string, error) {
	return []string{"bees", "notes"}, nil
}
func (embeddersStore) Embedders(context.Context) (map[string]models.EmbedderIdentity, error) {
	return map[string]models.EmbedderIdentity{"bees": {Name: "local-hash-v1-256", Dims: 256}}, nil
}

// fixedReports answers every namespace's metrics with nothing surfaced.
type fixedReports struct{}

func (fixedReports) Metrics(_ context.Context, ns string, _, _ time.Time) (*api.MetricsResponse, error) {
	return &api.MetricsResponse{Namespace: ns, ByConversationType: map[string]api.OutcomeCounts{}, ByMode: map[string]api.OutcomeCounts{}}, nil
}

// TestNamespaceEmbedders: the namespace list shows each namespace's embedder and the
// server's, the metrics the namespace's own (none for one without vectors), as the API
// document describes them.
func TestNamespaceEmbedders(t *testing.T) {
	s, _ := newTestServer(t, Config{Namespaces: embeddersStore{}, Reports: fixedReports{},
		Embedder: models.EmbedderIdentity{Name: "static-test-256", Dims: 256}})
	res, body := do(t, s.Handler(), "GET", "/v1/admin/namespaces", "")
	want := `{"namespaces":["bees","notes"],"embedders":{"bees":{"name":"local-hash-v1-256","dims":256}},"embedder":{"name":"static-test-256","dims":256}}`
	if res.StatusCode != 200 || string(body) != want {
		t.Errorf("GET /v1/admin/namespaces = %d %s, want %s", res.StatusCode, body, want)
	}
	for ns, want := range map[string]string{"bees": `"embedder":{"name":"local-hash-v1-256","dims":256}`, "notes": ""} {
		res, body := do(t, s.Handler(), "GET", "/v1/namespaces/"+ns+"/metrics", "")
		if res.StatusCode != 200 || (want != "" && !strings.Contains(string(body), want)) || (want == "" && strings.Contains(string(body), `"embedder"`)) {
			t.Errorf("GET metrics of %s = %d %s, want embedder %q", ns, res.StatusCode, body, want)
		}
	}
}
