package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/salience-ai/salience/api"
)

// These tests run the client against scripted servers, to prove what a real server rarely
// does on demand: fail, stall, answer garbage.

// script answers the i-th request with steps[i] (the last step repeats) and records the
// bodies it received.
type script struct {
	mu     sync.Mutex
	steps  []func(w http.ResponseWriter)
	bodies []string
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	i := min(len(s.bodies), len(s.steps)-1)
	s.bodies = append(s.bodies, string(b))
	s.mu.Unlock()
	s.steps[i](w)
}

func (s *script) calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bodies)
}

func status(code int, body string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

const unavailable = `{"error":{"code":"unavailable","message":"loading"}}`

// newScripted returns a client of a scripted server whose waits are recorded, not slept.
func newScripted(t *testing.T, s *script) (*Client, *[]time.Duration) {
	t.Helper()
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	c, err := New(hs.URL, WithRetries(3, 100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	var waits []time.Duration
	c.rand = func() float64 { return 0.5 } // no jitter: waits are exact
	c.sleep = func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return ctx.Err() }
	return c, &waits
}

func TestIdempotentCallsAreRetried(t *testing.T) {
	memory := `{"id":"m1","namespace":"a","kind":"fact","content":"x","created_at":"2026-01-01T00:00:00Z"}`
	s := &script{steps: []func(http.ResponseWriter){status(503, unavailable), status(502, "<html>bad gateway</html>"), status(200, memory)}}
	c, waits := newScripted(t, s)
	m, err := c.Namespace("a").Get(context.Background(), "m1")
	if err != nil {
		t.Fatal(err)
	}
	if m.ID != "m1" || s.calls() != 3 {
		t.Errorf("got %q after %d calls, want m1 after 3", m.ID, s.calls())
	}
	// 100 ms, then 200 ms: the base doubling, jitter factor 1.
	if want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}; !equal(*waits, want) {
		t.Errorf("waits = %v, want %v", *waits, want)
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	s := &script{steps: []func(http.ResponseWriter){
		func(w http.ResponseWriter) { w.Header().Set("Retry-After", "2"); status(503, unavailable)(w) },
		status(200, `{"namespaces":["a"]}`)}}
	c, waits := newScripted(t, s)
	if _, err := c.Namespaces(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := []time.Duration{2 * time.Second}; !equal(*waits, want) {
		t.Errorf("waits = %v, want %v", *waits, want)
	}
}

func TestNonIdempotentCallsAreNotRetried(t *testing.T) {
	calls := map[string]func(c *Client) error{
		"store": func(c *Client) error {
			_, err := c.Namespace("a").Store(context.Background(), api.MemoryInput{Kind: "fact", Content: "x"})
			return err
		},
		"store batch": func(c *Client) error {
			_, err := c.Namespace("a").StoreBatch(context.Background(), []api.MemoryInput{{Kind: "fact", Content: "x"}})
			return err
		},
		"recall": func(c *Client) error {
			_, err := c.Namespace("a").Recall(context.Background(), api.RecallRequest{Query: "x"})
			return err
		},
		"run job": func(c *Client) error { _, err := c.RunJob(context.Background(), "decay-scan"); return err },
		// A write conditional on a version: a retry after a lost answer would meet the
		// version the first attempt made and report a conflict for a write that succeeded.
		"put settings with a version": func(c *Client) error {
			_, err := c.Namespace("a").PutSettings(context.Background(), api.Settings{Version: 3, Rerank: "off"})
			return err
		},
		"patch settings with a version": func(c *Client) error {
			_, err := c.Namespace("a").PatchSettings(context.Background(), map[string]any{"version": 3, "diversity": 0.5})
			return err
		},
	}
	for name, f := range calls {
		t.Run(name, func(t *testing.T) {
			s := &script{steps: []func(http.ResponseWriter){status(503, unavailable)}}
			c, _ := newScripted(t, s)
			err := f(c)
			if ErrorCode(err) != CodeUnavailable || s.calls() != 1 {
				t.Errorf("err = %v after %d calls, want unavailable after 1", err, s.calls())
			}
		})
	}
}

func TestEngagementRetriesKeepTheEventIDs(t *testing.T) {
	s := &script{steps: []func(http.ResponseWriter){status(503, unavailable),
		status(200, `{"applied":2,"duplicates":0,"rejected":0,"results":[{"id":"x","status":"applied"},{"id":"y","status":"applied"}]}`)}}
	c, _ := newScripted(t, s)
	_, err := c.Namespace("a").Report(context.Background(),
		api.EngagementEvent{SurfacingID: "s1", Type: EventUsed},
		api.EngagementEvent{ID: "mine", SurfacingID: "s2", Type: EventIgnored})
	if err != nil {
		t.Fatal(err)
	}
	if s.calls() != 2 || s.bodies[0] != s.bodies[1] {
		t.Fatalf("%d calls with bodies %q, want 2 identical", s.calls(), s.bodies)
	}
	var req api.EngagementRequest
	if err := json.Unmarshal([]byte(s.bodies[0]), &req); err != nil {
		t.Fatal(err)
	}
	if len(req.Events) != 2 || len(req.Events[0].ID) < 10 || req.Events[1].ID != "mine" {
		t.Errorf("events = %+v, want an assigned id and the caller's", req.Events)
	}
}

func TestDeleteAfterAnUncertainAttemptAcceptsNotFound(t *testing.T) {
	notFound := `{"error":{"code":"not_found","message":"no memory"}}`
	s := &script{steps: []func(http.ResponseWriter){status(503, unavailable), status(404, notFound)}}
	c, _ := newScripted(t, s)
	if err := c.Namespace("a").Delete(context.Background(), "m1"); err != nil {
		t.Errorf("delete = %v, want nil: the first attempt may have deleted it", err)
	}
	// Without an earlier failure, not found is an error.
	s = &script{steps: []func(http.ResponseWriter){status(404, notFound)}}
	c, _ = newScripted(t, s)
	if err := c.Namespace("a").Delete(context.Background(), "m1"); ErrorCode(err) != CodeNotFound {
		t.Errorf("delete = %v, want not_found", err)
	}
}

func TestRetriesStopAtTheDeadline(t *testing.T) {
	s := &script{steps: []func(http.ResponseWriter){status(503, unavailable)}}
	hs := httptest.NewServer(s)
	defer hs.Close()
	c, err := New(hs.URL, WithRetries(10, 40*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = c.Jobs(ctx)
	// The last answer, or the deadline cutting a retry short along with the answer before.
	if ErrorCode(err) != CodeUnavailable {
		t.Errorf("err = %v, want the server's unavailable answer in it", err)
	}
	if d := time.Since(start); d > 2*time.Second || s.calls() >= 10 {
		t.Errorf("%d calls in %v: the deadline did not stop the retries", s.calls(), d)
	}
}

func TestAStalledServerMeetsTheDeadline(t *testing.T) {
	release := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hs.Close()
	defer close(release)
	c, _ := New(hs.URL, WithTimeout(50*time.Millisecond), WithRetries(0, 0))
	_, err := c.Namespaces(context.Background())
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the default timeout's deadline", err)
	}
}

func TestErrorsCarryTheServerCodeMessageAndField(t *testing.T) {
	s := &script{steps: []func(http.ResponseWriter){func(w http.ResponseWriter) {
		w.Header().Set("X-Request-ID", "req-7")
		status(400, `{"error":{"code":"invalid","message":"content is empty","field":"memories[2].content"}}`)(w)
	}}}
	c, _ := newScripted(t, s)
	_, err := c.Namespace("a").StoreBatch(context.Background(), []api.MemoryInput{{Kind: "fact"}})
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want an *Error", err)
	}
	want := Error{Status: 400, Code: CodeInvalid, Message: "content is empty", Field: "memories[2].content", RequestID: "req-7"}
	if *e != want {
		t.Errorf("error = %+v, want %+v", *e, want)
	}
	if got := e.Error(); got != "salience: 400 invalid: content is empty (field memories[2].content)" {
		t.Errorf("Error() = %q", got)
	}
}

func TestAnswerWithoutTheErrorShape(t *testing.T) {
	s := &script{steps: []func(http.ResponseWriter){status(413, "<html>too big</html>")}}
	c, _ := newScripted(t, s)
	_, err := c.Namespace("a").Store(context.Background(), api.MemoryInput{Kind: "fact", Content: "x"})
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeTooLarge || e.Message != "<html>too big</html>" {
		t.Errorf("err = %#v, want too_large with the body's text", err)
	}
}

func TestBackoff(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		attempt    int
		base, wait time.Duration
		r          float64
		want       time.Duration
	}{
		{0, 100 * ms, 0, 0.5, 100 * ms},                    // base × 1 × 1
		{2, 100 * ms, 0, 0, 200 * ms},                      // base × 4 × 0.5
		{1, 100 * ms, 0, 0.999, 299800 * time.Microsecond}, // base × 2 × 1.499
		{1, 100 * ms, time.Second, 0.5, time.Second},       // Retry-After beats the backoff
		{30, time.Second, 0, 0.9, maxBackoff},              // capped
		{0, 100 * ms, time.Minute, 0.5, maxBackoff},        // even when the server asks for more
	}
	for _, c := range cases {
		got := backoff(c.attempt, c.base, c.wait, c.r)
		if d := got - c.want; d < -ms || d > ms {
			t.Errorf("backoff(%d, %v, %v, %v) = %v, want %v", c.attempt, c.base, c.wait, c.r, got, c.want)
		}
	}
}

func TestNewRejectsBadURLs(t *testing.T) {
	for _, u := range []string{"", "127.0.0.1:7700", "ftp://x", "http://", "http://x/?q=1", "http://x/#f"} {
		if _, err := New(u); err == nil {
			t.Errorf("New(%q) = nil error", u)
		}
	}
	c, err := New("http://proxy.local/salience/")
	if err != nil || c.base != "http://proxy.local/salience" {
		t.Errorf("New kept base %q, %v", c.base, err)
	}
}

func TestRouteExpandEscapesEachSegment(t *testing.T) {
	got := routeGet.expand("a", "x/y z")
	if want := "/v1/namespaces/a/memories/x%2Fy%20z"; got != want {
		t.Errorf("expand = %q, want %q", got, want)
	}
}

func equal(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
