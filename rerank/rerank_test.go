package rerank

import (
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

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/salience-ai/salience/models"
)

// clock is a hand-moved clock: the gate and the breaker read it, the fake endpoint moves it
// to say how long a call took, and no test depends on the wall clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// chatServer speaks the OpenAI chat-completions API. answer returns the assistant's text, or
// writes its own response and returns ok false.
type chatServer struct {
	mu       sync.Mutex
	calls    int
	requests []chatRequest
	auth     []string
	answer   func(w http.ResponseWriter, r *http.Request, req chatRequest) (string, bool)
}

type chatRequest struct {
	Model     string `json:"model"`
	MaxTokens int    `json:"max_tokens"`
	Messages  []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
}

func (s *chatServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	_, _ = io.Copy(io.Discard, r.Body) // to EOF: only then does the server see a client leave
	s.mu.Lock()
	s.calls++
	s.requests = append(s.requests, req)
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	s.mu.Unlock()
	text, ok := s.answer(w, r, req)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "c1", "object": "chat.completion", "model": req.Model,
		"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
			"message": map[string]string{"role": "assistant", "content": text}}},
	})
}

func (s *chatServer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// answering returns an answer func that says text after moving clk by took.
func answering(clk *clock, took time.Duration, text string) func(http.ResponseWriter, *http.Request, chatRequest) (string, bool) {
	return func(http.ResponseWriter, *http.Request, chatRequest) (string, bool) {
		clk.Advance(took)
		return text, true
	}
}

func newTestReranker(t *testing.T, srv *chatServer, clk *clock, opts Options) *Reranker {
	t.Helper()
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	opts.BaseURL = hs.URL + "/v1/"
	opts.Now = clk.Now
	if opts.Margin == 0 {
		opts.Margin = 10 * time.Millisecond // the tests' arithmetic, whatever the default
	}
	if opts.Default == "" {
		opts.Default = PolicyOn
	}
	if opts.Model == "" {
		opts.Model = "test-haiku"
	}
	r, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func candidates(texts ...string) []Candidate {
	cs := make([]Candidate, len(texts))
	for i, t := range texts {
		cs[i] = Candidate{ID: "id-" + t, Text: t}
	}
	return cs
}

func request(budget time.Duration, cs []Candidate) *Request {
	return &Request{Namespace: "ns", Query: "where are the bees?", Candidates: cs, Budget: budget, Mode: ModeAuto}
}

func TestRerankApplied(t *testing.T) {
	clk := newClock()
	srv := &chatServer{}
	srv.answer = answering(clk, 40*time.Millisecond, `{"ranking": ["m3", "m1", "m2"]}`)
	r := newTestReranker(t, srv, clk, Options{APIKey: "sk-ant-test"})
	cs := candidates("bees\non the\troof", "a cat", "honey bees")
	out := r.Rerank(context.Background(), request(300*time.Millisecond, cs))
	if out.Status != StatusApplied || out.Reason != "" {
		t.Fatalf("outcome %+v, want applied", out)
	}
	if want := []int{2, 0, 1}; !slices.Equal(out.Order, want) {
		t.Errorf("order %v, want %v (the fake's m3, m1, m2)", out.Order, want)
	}
	if out.Latency != 40*time.Millisecond {
		t.Errorf("latency %v, want the 40ms the fake took", out.Latency)
	}
	req := srv.requests[0]
	if req.Model != "test-haiku" || srv.auth[0] != "Bearer sk-ant-test" {
		t.Errorf("model %q auth %q", req.Model, srv.auth[0])
	}
	if req.MaxTokens != 24+6*3 {
		t.Errorf("max_tokens %d, want %d", req.MaxTokens, 24+6*3)
	}
	if len(req.Messages) != 2 || req.Messages[0].Role != "system" || req.Messages[1].Role != "user" {
		t.Fatalf("messages %+v", req.Messages)
	}
	wantUser := "Turn:\nwhere are the bees?\n\nCandidates:\n[m1] bees on the roof\n[m2] a cat\n[m3] honey bees\n"
	if got := req.Messages[1].Content; got != wantUser {
		t.Errorf("user prompt\n%q, want\n%q", got, wantUser)
	}
	if p95, n := r.lat.p95(clk.Now()); p95 != 40*time.Millisecond || n != 1 {
		t.Errorf("p95 %v over %d samples, want 40ms over 1", p95, n)
	}
	if got := testutil.ToFloat64(r.metrics.outcomes.WithLabelValues(StatusApplied)); got != 1 {
		t.Errorf("salience_rerank_total{status=applied} = %v, want 1", got)
	}
}

func TestRerankSensitiveNeverSent(t *testing.T) {
	clk := newClock()
	srv := &chatServer{}
	srv.answer = answering(clk, time.Millisecond, `{"ranking": ["m3", "m2", "m1"]}`)
	r := newTestReranker(t, srv, clk, Options{TopN: 4})
	cs := candidates("alpha", "SECRET diary", "beta", "gamma", "delta beyond top n")
	cs[1].Sensitive = true
	out := r.Rerank(context.Background(), request(time.Second, cs))
	if out.Status != StatusApplied {
		t.Fatalf("outcome %+v", out)
	}
	if strings.Contains(srv.requests[0].Messages[1].Content, "SECRET") {
		t.Errorf("a sensitive memory was sent: %q", srv.requests[0].Messages[1].Content)
	}
	if strings.Contains(srv.requests[0].Messages[1].Content, "delta") {
		t.Errorf("a candidate beyond TopN was sent")
	}
	// Sent: alpha (slot 0) = m1, beta (slot 2) = m2, gamma (slot 3) = m3. The model says
	// m3, m2, m1: slots 0, 2, 3 take gamma, beta, alpha; the sensitive memory and the one
	// beyond TopN keep their places.
	if want := []int{3, 1, 2, 0, 4}; !slices.Equal(out.Order, want) {
		t.Errorf("order %v, want %v", out.Order, want)
	}
}

func TestRerankSkippedByGate(t *testing.T) {
	clk := newClock()
	srv := &chatServer{}
	srv.answer = answering(clk, 250*time.Millisecond, `{"ranking": ["m2", "m1"]}`)
	r := newTestReranker(t, srv, clk, Options{})
	cs := candidates("a", "b")

	// No history: the first call goes, and teaches the gate that calls take 250 ms.
	if out := r.Rerank(context.Background(), request(time.Second, cs)); out.Status != StatusApplied {
		t.Fatalf("first call %+v, want applied", out)
	}
	// 20 ms spent + p95 250 ms + margin 10 ms > 200 ms: skipped, nothing sent.
	req := request(200*time.Millisecond, cs)
	req.Elapsed = 20 * time.Millisecond
	out := r.Rerank(context.Background(), req)
	if out.Status != StatusSkippedBudget || out.Order != nil {
		t.Fatalf("outcome %+v, want skipped_budget", out)
	}
	if want := "elapsed 20.0ms + p95 250.0ms + margin 10.0ms > budget 200.0ms"; out.Reason != want {
		t.Errorf("reason %q, want %q", out.Reason, want)
	}
	if srv.count() != 1 {
		t.Errorf("%d calls, want 1: a skipped rerank must not call", srv.count())
	}
	// 20 + 250 + 10 ≤ 280: allowed.
	req.Budget = 280 * time.Millisecond
	if out := r.Rerank(context.Background(), req); out.Status != StatusApplied {
		t.Errorf("at budget 280ms: %+v, want applied", out)
	}
	// The samples age out: after SampleTTL the gate tries again.
	clk.Advance(DefaultSampleTTL)
	req.Budget = 200 * time.Millisecond
	if out := r.Rerank(context.Background(), req); out.Status != StatusApplied {
		t.Errorf("after the samples expired: %+v, want applied", out)
	}
	// rerank "on" skips the p95 test (the last call took 250 ms, so auto would skip)...
	req.Mode = ModeOn
	if out := r.Rerank(context.Background(), req); out.Status != StatusApplied {
		t.Errorf("mode on: %+v, want applied", out)
	}
	// ...but never the budget itself.
	req.Elapsed = 195 * time.Millisecond
	if out := r.Rerank(context.Background(), req); out.Status != StatusSkippedBudget || !strings.HasPrefix(out.Reason, "no time left") {
		t.Errorf("mode on with 5ms left: %+v, want skipped_budget, no time left", out)
	}
	if got := testutil.ToFloat64(r.metrics.outcomes.WithLabelValues(StatusSkippedBudget)); got != 2 {
		t.Errorf("salience_rerank_total{status=skipped_budget} = %v, want 2", got)
	}
}

func TestRerankDeadline(t *testing.T) {
	clk := newClock()
	srv := &chatServer{}
	release := make(chan struct{})
	defer close(release)
	srv.answer = func(_ http.ResponseWriter, r *http.Request, _ chatRequest) (string, bool) {
		select { // hangs until the client gives up
		case <-r.Context().Done():
		case <-release:
		}
		return "", false
	}
	r := newTestReranker(t, srv, clk, Options{})
	req := request(60*time.Millisecond, candidates("a", "b", "c"))
	req.Elapsed = 5 * time.Millisecond
	out := r.Rerank(context.Background(), req)
	if out.Status != StatusTimeout || out.Order != nil {
		t.Fatalf("outcome %+v, want timeout with the original order", out)
	}
	// The call's deadline is what was left: 60 − 5 elapsed − 10 margin.
	if want := "no answer within the 45.0ms left of the budget"; out.Reason != want {
		t.Errorf("reason %q, want %q", out.Reason, want)
	}
	if r.breaker.failures != 0 {
		t.Errorf("breaker failures %d, want 0: a timeout is the gate's business", r.breaker.failures)
	}
	// The cut-off call taught the gate that a call takes at least the 45 ms it had: one
	// more millisecond spent and the next request is skipped.
	req.Elapsed = 6 * time.Millisecond
	if out := r.Rerank(context.Background(), req); out.Status != StatusSkippedBudget || !strings.Contains(out.Reason, "p95 45.0ms") {
		t.Errorf("after a timeout: %+v, want skipped_budget on p95 45ms", out)
	}
}

func TestRerankBreaker(t *testing.T) {
	clk := newClock()
	srv := &chatServer{}
	var mu sync.Mutex
	failing := true
	srv.answer = func(w http.ResponseWriter, _ *http.Request, _ chatRequest) (string, bool) {
		mu.Lock()
		defer mu.Unlock()
		if failing {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"error":{"message":"overloaded","type":"api_error"}}`))
			return "", false
		}
		return `{"ranking": ["m2", "m1"]}`, true
	}
	var logs syncBuffer
	r := newTestReranker(t, srv, clk, Options{FailureThreshold: 3, Cooldown: 30 * time.Second,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	req := request(time.Second, candidates("a", "b"))
	for i := 0; i < 3; i++ {
		out := r.Rerank(context.Background(), req)
		if out.Status != StatusError || !strings.Contains(out.Reason, "overloaded") {
			t.Fatalf("call %d: %+v, want error naming the endpoint's message", i, out)
		}
	}
	// Open: no call for the cool-down.
	out := r.Rerank(context.Background(), req)
	if out.Status != StatusCircuitOpen || out.Reason != "circuit open after 3 failures in a row; next trial in 30000.0ms" {
		t.Fatalf("after 3 failures: %+v, want circuit_open", out)
	}
	clk.Advance(29 * time.Second)
	if out := r.Rerank(context.Background(), req); out.Status != StatusCircuitOpen {
		t.Fatalf("29s later: %+v, want still circuit_open", out)
	}
	if srv.count() != 3 {
		t.Fatalf("%d calls, want 3: an open circuit must not call", srv.count())
	}
	// Half-open after 30 s: one trial; it fails, so the circuit opens again.
	clk.Advance(time.Second)
	if out := r.Rerank(context.Background(), req); out.Status != StatusError {
		t.Fatalf("half-open trial: %+v, want error", out)
	}
	if out := r.Rerank(context.Background(), req); out.Status != StatusCircuitOpen {
		t.Fatalf("after the failed trial: %+v, want circuit_open", out)
	}
	// Next half-open trial succeeds: closed, and calls flow.
	mu.Lock()
	failing = false
	mu.Unlock()
	clk.Advance(30 * time.Second)
	for i := 0; i < 2; i++ {
		if out := r.Rerank(context.Background(), req); out.Status != StatusApplied || !slices.Equal(out.Order, []int{1, 0}) {
			t.Fatalf("after recovery, call %d: %+v, want applied", i, out)
		}
	}
	if srv.count() != 6 {
		t.Errorf("%d calls, want 6", srv.count())
	}
	// The operator hears of it once each way (a failed trial re-opens without a new line).
	if got := strings.Count(logs.String(), "circuit open"); got != 1 {
		t.Errorf("%d 'circuit open' log lines, want 1:\n%s", got, logs.String())
	}
	if got := strings.Count(logs.String(), "circuit closed"); got != 1 {
		t.Errorf("%d 'circuit closed' log lines, want 1:\n%s", got, logs.String())
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
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

// Concurrent recalls share the gate, the breaker and the metrics (run with -race).
func TestRerankConcurrent(t *testing.T) {
	clk := newClock()
	srv := &chatServer{}
	srv.answer = answering(clk, 0, `{"ranking": ["m2", "m1"]}`)
	r := newTestReranker(t, srv, clk, Options{})
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				if out := r.Rerank(context.Background(), request(time.Second, candidates("a", "b"))); out.Status != StatusApplied {
					t.Errorf("outcome %+v", out)
				}
			}
		}()
	}
	wg.Wait()
	if got := testutil.ToFloat64(r.metrics.outcomes.WithLabelValues(StatusApplied)); got != 80 {
		t.Errorf("applied %v, want 80", got)
	}
	if _, n := r.P95(); n != DefaultWindow {
		t.Errorf("%d samples, want the window's %d", n, DefaultWindow)
	}
}

func TestRerankUnusableAnswers(t *testing.T) {
	for _, tc := range []struct {
		name, answer, reason string
	}{
		{"prose", `Here is the ranking: m2, m1, m3`, "not the JSON asked for"},
		{"unknown id", `{"ranking": ["m2", "m9", "m1"]}`, `unknown id "m9"`},
		{"memory id instead of label", `{"ranking": ["id-a", "m2", "m3"]}`, `unknown id "id-a"`},
		{"leading zero", `{"ranking": ["m01", "m2", "m3"]}`, `unknown id "m01"`},
		{"twice", `{"ranking": ["m2", "m2", "m1"]}`, `id "m2" listed twice`},
		{"incomplete", `{"ranking": ["m2", "m1"]}`, "ranked 2 of 3 candidates"},
		{"text after", `{"ranking": ["m2", "m1", "m3"]} I hope this helps`, "text after the JSON"},
		{"other field", `{"ranking": ["m2", "m1", "m3"], "why": "x"}`, "unknown field"},
		{"no ranking", `{}`, "no ranking"},
		{"numbers", `{"ranking": [2, 1, 3]}`, "not the JSON asked for"},
		{"empty", ``, "not the JSON asked for"},
		{"open fence", "```json\n{\"ranking\": [\"m2\", \"m1\", \"m3\"]}", "unterminated code fence"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock()
			srv := &chatServer{}
			srv.answer = answering(clk, time.Millisecond, tc.answer)
			r := newTestReranker(t, srv, clk, Options{})
			out := r.Rerank(context.Background(), request(time.Second, candidates("a", "b", "c")))
			if out.Status != StatusError || out.Order != nil {
				t.Fatalf("outcome %+v, want error with no order", out)
			}
			if !strings.Contains(out.Reason, tc.reason) {
				t.Errorf("reason %q, want it to contain %q", out.Reason, tc.reason)
			}
		})
	}
}

func TestParseRankingFenced(t *testing.T) {
	got, err := parseRanking("```json\n{\"ranking\": [\"m2\", \"m3\", \"m1\"]}\n```", 3)
	if err != nil || !slices.Equal(got, []int{1, 2, 0}) {
		t.Errorf("fenced answer: %v, %v; want [1 2 0]", got, err)
	}
	if _, err := parseRanking(`{"ranking": ["m1"]}`, 1); err != nil {
		t.Errorf("one candidate: %v", err)
	}
	if _, err := parseRanking(`{"ranking":["m1"]}`, 2); !errors.Is(err, errAnswer) {
		t.Errorf("err %v, want errAnswer", err)
	}
}

func TestRerankOffAndPolicy(t *testing.T) {
	clk := newClock()
	srv := &chatServer{}
	srv.answer = answering(clk, time.Millisecond, `{"ranking": ["m2", "m1"]}`)
	on, off := &models.Settings{Rerank: PolicyOn}, &models.Settings{Rerank: PolicyOff}
	settings := mapSettings{"quiet": off, "loud": on}
	r := newTestReranker(t, srv, clk, Options{Default: PolicyOff, Settings: settings})
	for _, tc := range []struct {
		ns, mode, status, reason string
	}{
		{"loud", ModeOff, StatusOff, "rerank off in request"},
		{"loud", ModeAuto, StatusApplied, ""},
		{"quiet", ModeAuto, StatusOff, "rerank off in the settings of namespace quiet"},
		{"quiet", ModeOn, StatusOff, "rerank off in the settings of namespace quiet"},
		{"none", ModeAuto, StatusOff, `rerank off by default (turn it on with --rerank on, or {"rerank":"on"} in the namespace settings)`},
		{"broken", ModeAuto, StatusOff, "rerank off: settings of namespace broken unusable: stored settings are not a settings record"},
		{"failing", ModeAuto, StatusOff, "rerank off: settings of namespace failing unusable: internal error"},
	} {
		req := request(time.Second, candidates("a", "b"))
		req.Namespace, req.Mode = tc.ns, tc.mode
		out := r.Rerank(context.Background(), req)
		if out.Status != tc.status || out.Reason != tc.reason {
			t.Errorf("%s/%s: %+v, want %s %q", tc.ns, tc.mode, out, tc.status, tc.reason)
		}
	}
	if srv.count() != 1 {
		t.Errorf("%d calls, want 1 (only the namespace that turned it on)", srv.count())
	}
	// The reranker keeps no copy: the next request follows the settings as they are now.
	settings["loud"] = off
	req := request(time.Second, candidates("a", "b"))
	req.Namespace = "loud"
	if out := r.Rerank(context.Background(), req); out.Status != StatusOff {
		t.Errorf("after the settings changed: %+v, want off", out)
	}
	// Fewer than two candidates: nothing to do.
	if out := r.Rerank(context.Background(), &Request{Namespace: "none", Candidates: candidates("a")}); out.Status != StatusOff {
		t.Errorf("one candidate: %+v", out)
	}
}

type mapSettings map[string]*models.Settings

func (m mapSettings) For(_ context.Context, ns string) (*models.Settings, error) {
	switch ns {
	case "failing":
		return nil, errors.New("disk on fire")
	case "broken":
		return nil, models.Invalid("", "stored settings are not a settings record")
	}
	if s, ok := m[ns]; ok {
		return s, nil
	}
	return &models.Settings{}, nil
}

func TestNewRejectsBadPolicy(t *testing.T) {
	if _, err := New(Options{Default: "maybe"}); err == nil || !strings.Contains(err.Error(), `"maybe"`) {
		t.Errorf("New(Default maybe) = %v, want an error naming it", err)
	}
	r, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.opts.BaseURL != "https://api.anthropic.com/v1/" || r.Model() != "claude-haiku-4-5" || r.opts.Default != PolicyOff {
		t.Errorf("defaults: %q %q %q", r.opts.BaseURL, r.Model(), r.opts.Default)
	}
	if len(r.Collectors()) != 2 {
		t.Errorf("%d collectors", len(r.Collectors()))
	}
}

func TestRerankProbesWhileSkipping(t *testing.T) {
	clk := newClock()
	srv := &chatServer{}
	var mu sync.Mutex
	took := 250 * time.Millisecond
	hang := false
	srv.answer = func(_ http.ResponseWriter, r *http.Request, _ chatRequest) (string, bool) {
		mu.Lock()
		d, h := took, hang
		mu.Unlock()
		if h {
			<-r.Context().Done() // cut off by the deadline
			return "", false
		}
		clk.Advance(d)
		return `{"ranking": ["m2", "m1"]}`, true
	}
	set := func(d time.Duration, h bool) { mu.Lock(); took, hang = d, h; mu.Unlock() }
	r := newTestReranker(t, srv, clk, Options{ProbeEvery: time.Second, SampleTTL: time.Hour})
	req := request(100*time.Millisecond, candidates("a", "b"))
	// One slow call (250 ms, with a 1 s budget) makes the gate say no at 100 ms.
	if out := r.Rerank(context.Background(), request(time.Second, candidates("a", "b"))); out.Status != StatusApplied {
		t.Fatalf("first call %+v", out)
	}
	if out := r.Rerank(context.Background(), req); out.Status != StatusSkippedBudget {
		t.Fatalf("right after: %+v, want skipped_budget", out)
	}
	// A second without calls: one probe goes, under the 90 ms left; the endpoint got fast.
	set(20*time.Millisecond, false)
	clk.Advance(time.Second)
	out := r.Rerank(context.Background(), req)
	if out.Status != StatusApplied || !strings.HasPrefix(out.Reason, "a probe past the p95 (250.0ms > 90.0ms left)") {
		t.Fatalf("probe: %+v, want applied as a probe", out)
	}
	if out := r.Rerank(context.Background(), req); out.Status != StatusSkippedBudget {
		t.Fatalf("right after the probe: %+v, want skipped_budget (one probe per second)", out)
	}
	// A probe that is cut off doubles the wait before the next.
	set(0, true)
	clk.Advance(time.Second)
	if out := r.Rerank(context.Background(), req); out.Status != StatusTimeout || !strings.Contains(out.Reason, "a probe past the p95") {
		t.Fatalf("hanging probe: %+v, want timeout", out)
	}
	clk.Advance(time.Second)
	if out := r.Rerank(context.Background(), req); out.Status != StatusSkippedBudget {
		t.Fatalf("1 s after a failed probe: %+v, want skipped_budget (next probe after 2 s)", out)
	}
	set(20*time.Millisecond, false)
	clk.Advance(time.Second)
	if out := r.Rerank(context.Background(), req); out.Status != StatusApplied {
		t.Fatalf("2 s after the failed probe: %+v, want a probe, applied", out)
	}
	if srv.count() != 4 {
		t.Errorf("%d calls, want 4 (the first and three probes)", srv.count())
	}
}

// TestVariantPolicyReplacesTheNamespaces: an experiment variant's policy wins over the
// namespace's settings both ways.
func TestVariantPolicyReplacesTheNamespaces(t *testing.T) {
	clk := newClock()
	srv := &chatServer{}
	srv.answer = answering(clk, time.Millisecond, `{"ranking": ["m2", "m1"]}`)
	settings := mapSettings{"quiet": &models.Settings{Rerank: PolicyOff}, "loud": &models.Settings{Rerank: PolicyOn}}
	r := newTestReranker(t, srv, clk, Options{Default: PolicyOff, Settings: settings})
	for _, tc := range []struct {
		ns, policy, status, reason string
	}{
		{"quiet", PolicyOn, StatusApplied, ""},
		{"loud", PolicyOff, StatusOff, "rerank off in the experiment variant"},
	} {
		req := request(time.Second, candidates("a", "b"))
		req.Namespace, req.Policy = tc.ns, tc.policy
		if out := r.Rerank(context.Background(), req); out.Status != tc.status || out.Reason != tc.reason {
			t.Errorf("%s with variant policy %s: %+v, want %s %q", tc.ns, tc.policy, out, tc.status, tc.reason)
		}
	}
}
