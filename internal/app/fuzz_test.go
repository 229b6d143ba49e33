package app

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// FuzzAPI sends arbitrary bodies and queries to the real server (store, embedder, ingest,
// recall behind the router) and checks that no input is answered with a 5xx. The decoders
// have their own fuzz targets in package server; this one also reaches the services.
// Run: go test -run=^$ -fuzz=^FuzzAPI$ -fuzztime=30s ./internal/app
func FuzzAPI(f *testing.F) {
	seeds := []struct {
		route uint8
		input string
	}{
		{0, `{"kind":"fact","content":"Nadia keeps her bees on the roof of the old cannery."}`},
		{0, `{"memories":[{"kind":"turn","content":"hi there","source":{"conversation_id":"c1"}},{"kind":"fact","content":"x","triple":{"subject":"a","predicate":"b","object":"c"}}]}`},
		{0, `{"kind":"document","content":"` + strings.Repeat("long text with words ", 80) + `"}`},
		{0, `{"kind":"fact","content":"x","valid_at":"2024-01-01T00:00:00Z","invalid_at":"2023-01-01T00:00:00Z"}`},
		{0, `{"kind":"fact","content":"\u0000\ud800"}`},
		{1, `{"mode":"search","query":"where are the bees kept?","conversation_id":"c1"}`},
		{1, `{"messages":[{"speaker":"u","content":"tell me about bees yesterday"}],"explain":true,"limit":3}`},
		{1, `{"mode":"startup","conversation_id":"c1"}`},
		{1, `{"query":"x","since":"2030-01-01T00:00:00Z","until":"2031-01-01T00:00:00Z","token_budget":1}`},
		{1, `{"query":"x","latency_budget_ms":1,"rerank":"on","focal_entity":"Nadia","entities":["Nadia"]}`},
		{2, `kind=fact&limit=5`},
		{2, `since=2024-01-01T00:00:00Z&offset=3`},
		{3, `01HZZZZZZZZZZZZZZZZZZZZZZZ`},
	}
	for _, s := range seeds {
		f.Add(s.route, []byte(s.input))
	}
	// One server for the whole run (and one per fuzz worker process), on a directory that
	// outlives the individual inputs.
	m := NewMain()
	m.Stdout, m.Stderr = io.Discard, io.Discard
	m.Getenv = func(string) string { return "" }
	if err := m.ParseFlags(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--data", f.TempDir(), "--log-level", "error"}); err != nil {
		f.Fatal(err)
	}
	if err := m.Run(context.Background()); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { m.Close() })
	for !m.store.Ready() {
		time.Sleep(5 * time.Millisecond)
	}
	h := m.api.Handler()

	f.Fuzz(func(t *testing.T, route uint8, input []byte) {
		var req *http.Request
		switch route % 4 {
		case 0:
			req = httptest.NewRequest("POST", "http://127.0.0.1/v1/namespaces/fuzz/memories", strings.NewReader(string(input)))
		case 1:
			req = httptest.NewRequest("POST", "http://127.0.0.1/v1/namespaces/fuzz/recall", strings.NewReader(string(input)))
		case 2:
			req = httptest.NewRequest("GET", "http://127.0.0.1/v1/namespaces/fuzz/memories", nil)
			req.URL.RawQuery = string(input)
		case 3:
			req = httptest.NewRequest("GET", "http://127.0.0.1/v1/namespaces/fuzz/memories/x", nil)
			req.URL.Path = "/v1/namespaces/fuzz/memories/" + string(input)
		}
		req.Header.Set("Content-Type", "application/json") // with the loopback Host above: what the keyless server accepts
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code >= 500 {
			t.Fatalf("route %d input %q: %d %s", route%4, input, w.Code, w.Body.Bytes())
		}
	})
}
