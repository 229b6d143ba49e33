package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/internal/testserver"
)

// The end-to-end tests run the same Main the binary runs, on a temporary data directory and
// port 0, with the real store, embedder, ingest and recall.

// syncBuffer collects the server's log; it is printed when a test fails.
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

// testServer is a running Main and a client for it.
type testServer struct {
	t    *testing.T
	m    *Main
	dir  string
	base string
	logs *syncBuffer

	validator *testserver.Validator
}

// startServer runs `salience serve` on dir (a new temporary directory when empty) with the
// extra flags, waits until it is ready, and stops it when the test ends.
func startServer(t *testing.T, dir string, flags ...string) *testServer {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	logs := &syncBuffer{}
	m := NewMain()
	m.Stdout, m.Stderr = logs, logs
	m.Getenv = func(string) string { return "" }
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", dir, "--log-level", "debug"}, flags...)
	if err := m.ParseFlags(context.Background(), args); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(context.Background()); err != nil {
		m.Close()
		t.Fatalf("Run: %v\n%s", err, logs)
	}
	s := &testServer{t: t, m: m, dir: dir, base: "http://" + m.Addr(), logs: logs}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if t.Failed() {
			t.Logf("server log:\n%s", logs)
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := http.Get(s.base + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready after 20 s\n%s", logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return s
}

// http returns the client of the test's requests: every exchange is validated against
// openapi.yaml (testserver.Validator), so the document is held to what the server does.
func (s *testServer) http() *http.Client {
	s.t.Helper()
	if s.validator == nil {
		s.validator = testserver.NewValidator(s.t, nil)
	}
	return &http.Client{Transport: s.validator}
}

// do sends a request with an optional bearer key and returns the status and body. Any 5xx
// fails the test: bad input must never be a server error.
func (s *testServer) do(method, path, body, key string) (int, []byte) {
	s.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.base+path, r)
	if err != nil {
		s.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := s.http().Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	if res.StatusCode >= 500 {
		s.t.Errorf("%s %s = %d %s: a server error", method, path, res.StatusCode, b)
	}
	return res.StatusCode, b
}

// must sends a request that must answer want and decodes the body into out (when not nil).
func (s *testServer) must(method, path, body, key string, want int, out any) {
	s.t.Helper()
	status, b := s.do(method, path, body, key)
	if status != want {
		s.t.Fatalf("%s %s = %d %s, want %d", method, path, status, b, want)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			s.t.Fatalf("%s %s: decoding %s: %v", method, path, b, err)
		}
	}
}

// ingest stores memories in ns (a single object or a batch body) and returns them.
func (s *testServer) ingest(ns, body, key string) []api.Memory {
	s.t.Helper()
	var out api.CreateMemoriesResponse
	s.must("POST", "/v1/namespaces/"+ns+"/memories", body, key, http.StatusCreated, &out)
	return out.Memories
}

func (s *testServer) recall(ns string, req api.RecallRequest, key string) api.RecallResponse {
	s.t.Helper()
	b, _ := json.Marshal(req)
	var out api.RecallResponse
	s.must("POST", "/v1/namespaces/"+ns+"/recall", string(b), key, http.StatusOK, &out)
	return out
}

func (s *testServer) list(ns, query, key string) api.ListMemoriesResponse {
	s.t.Helper()
	var out api.ListMemoriesResponse
	s.must("GET", "/v1/namespaces/"+ns+"/memories?"+query, "", key, http.StatusOK, &out)
	return out
}

func ids(ms []api.Memory) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

func resultIDs(rs []api.RecallResult) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

func TestServeEndToEnd(t *testing.T) {
	s := startServer(t, "")
	const ns = "e2e"

	// One memory.
	bees := s.ingest(ns, `{"kind":"fact","content":"Nadia keeps her bees on the roof of the old cannery.",
		"source":{"conversation_id":"c1","speaker":"nadia"},"importance":0.7,"domains":["hobbies"]}`, "")
	if len(bees) != 1 {
		t.Fatalf("created %d memories, want 1", len(bees))
	}
	b := bees[0]
	if b.ID == "" || b.Namespace != ns || b.Kind != "fact" || b.Importance != 0.7 || b.Confidence != 0.5 ||
		b.CreatedAt.IsZero() || b.Source == nil || b.Source.ConversationID != "c1" || b.Domains[0] != "hobbies" {
		t.Errorf("created %+v", b)
	}

	// A batch, with explicit times, and one long memory that is chunked.
	long := strings.Repeat("The lighthouse keeper logs the weather every morning before dawn. ", 40) +
		"At the very end of the log he notes that the lamp needs a new mantle."
	batchBody, _ := json.Marshal(api.CreateMemoriesRequest{Memories: []api.MemoryInput{
		{Kind: "turn", Content: "I am flying to Lisbon on Friday for the conference.", CreatedAt: time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC), Source: &api.Source{ConversationID: "c2", Speaker: "sam"}},
		{Kind: "turn", Content: "My sister adopted a grey cat called Pixel.", CreatedAt: time.Date(2024, 5, 2, 9, 0, 0, 0, time.UTC), Source: &api.Source{ConversationID: "c2", Speaker: "sam"}},
		{Kind: "document", Content: long, CreatedAt: time.Date(2024, 5, 3, 9, 0, 0, 0, time.UTC)},
	}})
	batch := s.ingest(ns, string(batchBody), "")
	if len(batch) != 3 || batch[0].Content != "I am flying to Lisbon on Friday for the conference." || batch[2].Kind != "document" {
		t.Fatalf("batch created %+v", batch)
	}
	if batch[2].ChunkCount < 2 || batch[2].Content != long {
		t.Errorf("long memory: chunk_count %d, content kept whole %v", batch[2].ChunkCount, batch[2].Content == long)
	}

	t.Run("recall finds what was stored", func(t *testing.T) {
		r := s.recall(ns, api.RecallRequest{Mode: "search", Query: "where are the bees kept?", ConversationID: "c9"}, "")
		if len(r.Results) == 0 || r.Results[0].ID != b.ID {
			t.Fatalf("results %v, want %s first", resultIDs(r.Results), b.ID)
		}
		top := r.Results[0]
		if top.SurfacingID == "" || top.Kind != "fact" || !strings.Contains(top.Content, "cannery") || top.Components != nil {
			t.Errorf("top result %+v", top)
		}
		if !strings.Contains(r.Context, "cannery") || r.TurnID == "" || r.Rerank.Status == "" {
			t.Errorf("context %q, turn %q, rerank %+v", r.Context, r.TurnID, r.Rerank)
		}
		r = s.recall(ns, api.RecallRequest{Mode: "search", Query: "Pixel the cat", Explain: true, Limit: 1}, "")
		if len(r.Results) != 1 || r.Results[0].ID != batch[1].ID || r.Results[0].Components == nil || r.Results[0].Components.Relevance <= 0 {
			t.Errorf("explained recall %+v", r.Results)
		}
		// A fragment of the long memory, hydrated by its parent id.
		r = s.recall(ns, api.RecallRequest{Mode: "search", Query: "lamp needs a new mantle"}, "")
		if len(r.Results) == 0 || r.Results[0].ID != batch[2].ID || r.Results[0].Fragment == nil || r.Results[0].Fragment.ParentID != batch[2].ID {
			t.Fatalf("fragment recall %+v", r.Results)
		}
		if f := r.Results[0].Fragment; f.Index < 1 || f.Index > f.Count || f.Count != batch[2].ChunkCount {
			t.Errorf("fragment %+v of %d chunks", f, batch[2].ChunkCount)
		}
		// Nothing relevant: an empty list and an empty context, not filler.
		r = s.recall(ns, api.RecallRequest{Mode: "search", Query: "quantum chromodynamics"}, "")
		if len(r.Results) != 0 || r.Context != "" {
			t.Errorf("irrelevant query returned %v %q", resultIDs(r.Results), r.Context)
		}
	})

	t.Run("get returns the whole memory, also for a chunk id", func(t *testing.T) {
		var got api.Memory
		s.must("GET", "/v1/namespaces/"+ns+"/memories/"+b.ID, "", "", 200, &got)
		if got.ID != b.ID || got.Content != b.Content || got.Namespace != ns {
			t.Errorf("got %+v", got)
		}
		s.must("GET", "/v1/namespaces/"+ns+"/memories/"+batch[2].ID+"-1", "", "", 200, &got)
		if got.ID != batch[2].ID || got.Content != long {
			t.Errorf("chunk id returned %s (whole content %v), want the parent %s", got.ID, got.Content == long, batch[2].ID)
		}
	})

	t.Run("list filters", func(t *testing.T) {
		all := s.list(ns, "", "")
		if all.Total != 4 || len(all.Memories) != 4 {
			t.Fatalf("list all: %d of %d", len(all.Memories), all.Total)
		}
		for i := 1; i < len(all.Memories); i++ {
			if all.Memories[i].CreatedAt.After(all.Memories[i-1].CreatedAt) {
				t.Errorf("list is not newest first: %v", ids(all.Memories))
			}
		}
		tests := []struct {
			query string
			want  []string
			total int
		}{
			{"kind=turn", []string{batch[1].ID, batch[0].ID}, 2},
			{"kind=fact&kind=document", []string{b.ID, batch[2].ID}, 2},
			{"conversation_id=c2", []string{batch[1].ID, batch[0].ID}, 2},
			{"since=2024-05-02T00:00:00Z&until=2024-05-03T09:00:00Z", []string{batch[1].ID}, 1},
			{"kind=turn&limit=1&offset=1", []string{batch[0].ID}, 2},
			{"conversation_id=nope", []string{}, 0},
		}
		for _, tt := range tests {
			got := s.list(ns, tt.query, "")
			if strings.Join(ids(got.Memories), ",") != strings.Join(tt.want, ",") || got.Total != tt.total {
				t.Errorf("%s: got %v total %d, want %v total %d", tt.query, ids(got.Memories), got.Total, tt.want, tt.total)
			}
		}
	})

	t.Run("bad input is a 4xx naming the field", func(t *testing.T) {
		tooMany := `{"memories":[` + strings.Repeat(`{"kind":"fact","content":"x"},`, 1000) + `{"kind":"fact","content":"x"}]}`
		tests := []struct {
			name, method, path, body string
			status                   int
			code, field              string
		}{
			{"malformed JSON", "POST", "/memories", `{"kind":`, 400, "invalid", ""},
			{"syntax error", "POST", "/recall", `{"mode":"search",,}`, 400, "invalid", ""},
			{"empty body", "POST", "/memories", ``, 400, "invalid", ""},
			{"unknown field", "POST", "/memories", `{"kind":"fact","contnt":"x"}`, 400, "invalid", "contnt"},
			{"wrong type", "POST", "/memories", `{"kind":"fact","content":7}`, 400, "invalid", "content"},
			{"bad time", "POST", "/memories", `{"kind":"fact","content":"x","valid_at":"last May"}`, 400, "invalid", "valid_at"},
			{"empty content", "POST", "/memories", `{"kind":"fact","content":"  "}`, 400, "invalid", "content"},
			{"zero-width content", "POST", "/memories", `{"kind":"fact","content":"\u200b\u200c\u200d\u2060\ufeff"}`, 400, "invalid", "content"},
			{"unknown kind", "POST", "/memories", `{"kind":"memo","content":"x"}`, 400, "invalid", "kind"},
			{"oversized content", "POST", "/memories", `{"kind":"fact","content":"` + strings.Repeat("a", 65537) + `"}`, 413, "too_large", "content"},
			{"batch item invalid", "POST", "/memories", `{"memories":[{"kind":"fact","content":"ok"},{"kind":"fact","content":""}]}`, 400, "invalid", "memories[1].content"},
			{"batch of one invalid", "POST", "/memories", `{"memories":[{"kind":"fact","content":""}]}`, 400, "invalid", "memories[0].content"},
			{"batch of 1,001", "POST", "/memories", tooMany, 400, "invalid", "memories"},
			{"recall unknown field", "POST", "/recall", `{"query":"x","limt":3}`, 400, "invalid", "limt"},
			{"recall bad mode", "POST", "/recall", `{"mode":"psychic","query":"x"}`, 400, "invalid", "mode"},
			{"recall limit", "POST", "/recall", `{"query":"x","limit":101}`, 400, "invalid", "limit"},
			{"recall no query", "POST", "/recall", `{"mode":"search"}`, 400, "invalid", "query"},
			{"recall bad kind", "POST", "/recall", `{"query":"x","kinds":["fact","memo"]}`, 400, "invalid", "kinds[1]"},
			{"recall message time", "POST", "/recall", `{"messages":[{"content":"hi","at":"noon"}]}`, 400, "invalid", "messages[0].at"},
			{"list bad limit", "GET", "/memories?limit=0", ``, 400, "invalid", "limit"},
			{"list bad kind", "GET", "/memories?kind=memo", ``, 400, "invalid", "kind"},
			{"list bad since", "GET", "/memories?since=May", ``, 400, "invalid", "since"},
			{"missing memory", "GET", "/memories/01HZZZZZZZZZZZZZZZZZZZZZZZ", ``, 404, "not_found", ""},
			{"delete missing", "DELETE", "/memories/01HZZZZZZZZZZZZZZZZZZZZZZZ", ``, 404, "not_found", ""},
			{"wrong method", "PUT", "/memories", `{}`, 405, "method_not_allowed", ""},
		}
		for _, tt := range tests {
			status, body := s.do(tt.method, "/v1/namespaces/bad-input"+tt.path, tt.body, "")
			var e api.ErrorResponse
			if err := json.Unmarshal(body, &e); err != nil || status != tt.status || e.Error.Code != tt.code || e.Error.Field != tt.field || e.Error.Message == "" {
				t.Errorf("%s: %d %.300s, want %d %s naming %q", tt.name, status, body, tt.status, tt.code, tt.field)
			}
		}
		for _, path := range []string{"/v1/namespaces/-bad/memories", "/v1/namespaces/" + strings.Repeat("n", 65) + "/memories"} {
			status, body := s.do("POST", path, `{"kind":"fact","content":"x"}`, "")
			var e api.ErrorResponse
			if json.Unmarshal(body, &e); status != 400 || e.Error.Field != "namespace" {
				t.Errorf("POST %s = %d %s, want 400 naming namespace", path, status, body)
			}
		}
		// Nothing of the invalid batches was written.
		if got := s.list("bad-input", "", ""); got.Total != 0 {
			t.Errorf("invalid requests wrote %d memories: %v", got.Total, ids(got.Memories))
		}
	})

	t.Run("delete", func(t *testing.T) {
		s.must("DELETE", "/v1/namespaces/"+ns+"/memories/"+b.ID, "", "", 204, nil)
		s.must("GET", "/v1/namespaces/"+ns+"/memories/"+b.ID, "", "", 404, nil)
		s.must("DELETE", "/v1/namespaces/"+ns+"/memories/"+b.ID, "", "", 404, nil)
		if got := s.list(ns, "", ""); got.Total != 3 {
			t.Errorf("after delete: total %d, want 3", got.Total)
		}
		r := s.recall(ns, api.RecallRequest{Mode: "search", Query: "where are the bees kept?"}, "")
		for _, res := range r.Results {
			if res.ID == b.ID {
				t.Errorf("deleted memory %s still recalled", b.ID)
			}
		}
	})

	t.Run("admin and metrics", func(t *testing.T) {
		var nss api.NamespacesResponse
		s.must("GET", "/v1/admin/namespaces", "", "", 200, &nss)
		if strings.Join(nss.Namespaces, ",") != ns {
			t.Errorf("namespaces = %v, want [%s]", nss.Namespaces, ns)
		}
		_, metrics := s.do("GET", "/metrics", "", "")
		for _, want := range []string{
			"salience_memories_ingested_total 4",
			`salience_recall_latency_seconds_count{mode="search"}`,
			`salience_http_requests_total{code="201",method="POST",route="/v1/namespaces/:ns/memories"} 2`,
		} {
			if !strings.Contains(string(metrics), want) {
				t.Errorf("metrics lack %q", want)
			}
		}
		// (/readyz answers 503 until the indexes are loaded; that is its job.)
		if bad := grepLines(grepLines(string(metrics), `code="5`), `route="/v1`); bad != "" {
			t.Errorf("an API request failed with a 5xx:\n%s", bad)
		}
	})

	// The data outlives the process: stop, start again on the same directory, read back.
	if err := s.m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(s.dir, "salience.db")); err != nil {
		t.Fatalf("no database file: %v", err)
	}
	s2 := startServer(t, s.dir)
	var got api.Memory
	s2.must("GET", "/v1/namespaces/"+ns+"/memories/"+batch[1].ID, "", "", 200, &got)
	if got.Content != "My sister adopted a grey cat called Pixel." {
		t.Errorf("after restart: %+v", got)
	}
	r := s2.recall(ns, api.RecallRequest{Mode: "search", Query: "Pixel the cat"}, "")
	if len(r.Results) == 0 || r.Results[0].ID != batch[1].ID {
		t.Errorf("after restart recall = %v, want %s first", resultIDs(r.Results), batch[1].ID)
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestShutdownFinishesInFlightRequests(t *testing.T) {
	s := startServer(t, "")
	// Many requests in flight while Close runs: each either completes normally or is refused
	// a connection; none is cut off mid-response.
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"kind":"fact","content":"fact number %d about shutdown"}`, i)
			res, err := http.Post(s.base+"/v1/namespaces/sd/memories", "application/json", strings.NewReader(body))
			if err != nil {
				return // refused after the listener closed
			}
			defer res.Body.Close()
			var out api.CreateMemoriesResponse
			if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != 201 {
				errs <- fmt.Errorf("request %d: %d %v", i, res.StatusCode, err)
			}
		}()
	}
	time.Sleep(5 * time.Millisecond)
	if err := s.m.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestLimitFlags checks that --max-body-bytes and --max-content-bytes reach the server and
// ingest: both limits answer 413, the content one naming the field.
func TestLimitFlags(t *testing.T) {
	s := startServer(t, "", "--max-body-bytes", "2048", "--max-content-bytes", "100")
	tests := []struct {
		name, body string
		status     int
		code       string
		field      string
	}{
		{"body over the limit", `{"kind":"fact","content":"` + strings.Repeat("b", 3000) + `"}`, 413, "too_large", ""},
		{"content over the limit", `{"kind":"fact","content":"` + strings.Repeat("c", 101) + `"}`, 413, "too_large", "content"},
		{"content at the limit", `{"kind":"fact","content":"` + strings.Repeat("c", 100) + `"}`, 201, "", ""},
	}
	for _, tt := range tests {
		status, body := s.do("POST", "/v1/namespaces/limits/memories", tt.body, "")
		if status != tt.status {
			t.Errorf("%s: %d %.200s, want %d", tt.name, status, body, tt.status)
			continue
		}
		var e api.ErrorResponse
		if tt.code != "" && (json.Unmarshal(body, &e) != nil || e.Error.Code != tt.code || e.Error.Field != tt.field) {
			t.Errorf("%s: %s, want %s naming %q", tt.name, body, tt.code, tt.field)
		}
	}
	if got := s.list("limits", "", ""); got.Total != 1 {
		t.Errorf("%d memories stored, want 1", got.Total)
	}
}
