package embed

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	const ms = time.Millisecond
	for _, tc := range []struct {
		name     string
		attempt  int
		ra       time.Duration
		haveRA   bool
		u        float64
		want     time.Duration
		min, max time.Duration
	}{
		// Equal jitter: d/2 + u·d/2 with d = min·2^attempt.
		{"first, no jitter", 0, 0, false, 0, 250 * ms, 500 * ms, 30 * time.Second},
		{"first, most jitter", 0, 0, false, 0.999, 499750 * time.Microsecond, 500 * ms, 30 * time.Second},
		{"third, half jitter", 2, 0, false, 0.5, 1500 * ms, 500 * ms, 30 * time.Second},
		{"capped", 10, 0, false, 0, 15 * time.Second, 500 * ms, 30 * time.Second},
		{"huge attempt", 5000, 0, false, 1, 30 * time.Second, 500 * ms, 30 * time.Second},
		{"Retry-After wins", 0, 7 * time.Second, true, 0.3, 7 * time.Second, 500 * ms, 30 * time.Second},
		{"Retry-After zero", 3, 0, true, 0.3, 0, 500 * ms, 30 * time.Second},
	} {
		if got := backoff(tc.min, tc.max, tc.attempt, tc.ra, tc.haveRA, tc.u); got != tc.want {
			t.Errorf("%s: backoff = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		h    string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"3", 3 * time.Second, true},
		{"0", 0, true},
		{"-1", 0, false},
		{"soon", 0, false},
		{"Mon, 01 Jun 2026 12:00:42 GMT", 42 * time.Second, true},
		{"Mon, 01 Jun 2026 11:59:00 GMT", 0, true}, // in the past: now
	} {
		got, ok := parseRetryAfter(tc.h, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", tc.h, got, ok, tc.want, tc.ok)
		}
	}
}

// failFirst answers the first n requests with status (and Retry-After when set), then
// normally.
func failFirst(n, status int, retryAfter string) func(http.ResponseWriter, *http.Request, embeddingsRequest, *embeddingsResponse) bool {
	var mu sync.Mutex
	seen := 0
	return func(w http.ResponseWriter, _ *http.Request, _ embeddingsRequest, _ *embeddingsResponse) bool {
		mu.Lock()
		defer mu.Unlock()
		seen++
		if seen > n {
			return false
		}
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"error":{"message":"slow down please","type":"rate_limit"}}`))
		return true
	}
}

// recordWaits makes o wait nothing between attempts and returns the waits it computed.
func recordWaits(o *OpenAI) *[]time.Duration {
	var mu sync.Mutex
	waits := &[]time.Duration{}
	o.sleep = func(d time.Duration) time.Duration {
		mu.Lock()
		*waits = append(*waits, d)
		mu.Unlock()
		return 0
	}
	return waits
}

func TestOpenAIRetries(t *testing.T) {
	for _, tc := range []struct {
		name       string
		status     int
		failures   int
		retryAfter string
		wantWaits  []time.Duration // nil: only the count is checked (jittered)
	}{
		{"429 with Retry-After", http.StatusTooManyRequests, 2, "3", []time.Duration{3 * time.Second, 3 * time.Second}},
		{"503 with Retry-After", http.StatusServiceUnavailable, 1, "1", []time.Duration{time.Second}},
		{"500", http.StatusInternalServerError, 3, "", nil},
		{"502", http.StatusBadGateway, 1, "", nil},
		{"429 without Retry-After", http.StatusTooManyRequests, 4, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := &embeddingsServer{dims: 4, respond: failFirst(tc.failures, tc.status, tc.retryAfter)}
			o := newTestOpenAI(t, srv, OpenAIConfig{})
			waits := recordWaits(o)
			got, err := o.Embed(context.Background(), []string{"a", "bb"})
			if err != nil {
				t.Fatalf("Embed after %d × %d: %v", tc.failures, tc.status, err)
			}
			if len(got) != 2 || len(got[1]) != 4 {
				t.Fatalf("got %v", got)
			}
			if len(srv.requests) != tc.failures+1 {
				t.Errorf("%d requests, want %d", len(srv.requests), tc.failures+1)
			}
			if len(*waits) != tc.failures {
				t.Fatalf("waits %v, want %d", *waits, tc.failures)
			}
			for i, w := range *waits {
				if tc.wantWaits != nil {
					if w != tc.wantWaits[i] {
						t.Errorf("wait %d = %v, want the server's Retry-After %v", i, w, tc.wantWaits[i])
					}
					continue
				}
				// Equal jitter around DefaultMinWait·2^i: within [d/2, d).
				d := DefaultMinWait << i
				if w < d/2 || w >= d {
					t.Errorf("wait %d = %v, want within [%v, %v)", i, w, d/2, d)
				}
			}
		})
	}
}

func TestOpenAIRetryBudget(t *testing.T) {
	srv := &embeddingsServer{dims: 4, respond: failFirst(100, http.StatusTooManyRequests, "1")}
	o := newTestOpenAI(t, srv, OpenAIConfig{Retries: 2})
	waits := recordWaits(o)
	_, err := o.Embed(context.Background(), []string{"a"})
	if err == nil {
		t.Fatal("Embed succeeded against a server that always says 429")
	}
	for _, want := range []string{"embed: openai: batch 1 of 1 (1 texts): gave up after 3 attempts", "429", "slow down please"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err %q, want it to contain %q", err, want)
		}
	}
	if len(srv.requests) != 3 || len(*waits) != 2 {
		t.Errorf("%d requests and %d waits, want 3 and 2", len(srv.requests), len(*waits))
	}
}

func TestOpenAINoRetryOnClientErrors(t *testing.T) {
	for _, status := range []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotImplemented} {
		srv := &embeddingsServer{dims: 4, respond: failFirst(1, status, "")}
		o := newTestOpenAI(t, srv, OpenAIConfig{})
		recordWaits(o)
		if _, err := o.Embed(context.Background(), []string{"a"}); err == nil || strings.Contains(err.Error(), "gave up") {
			t.Errorf("%d: err %v, want a plain error", status, err)
		}
		if len(srv.requests) != 1 {
			t.Errorf("%d: %d requests, want 1 (not retried)", status, len(srv.requests))
		}
	}
}

func TestOpenAIRetriesTimeouts(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	var mu sync.Mutex
	calls := 0
	srv := &embeddingsServer{dims: 4, respond: func(_ http.ResponseWriter, r *http.Request, _ embeddingsRequest, _ *embeddingsResponse) bool {
		mu.Lock()
		calls++
		first := calls == 1
		mu.Unlock()
		if !first {
			return false
		}
		select { // the first attempt hangs until the client gives up on it
		case <-r.Context().Done():
		case <-release:
		}
		return true
	}}
	o := newTestOpenAI(t, srv, OpenAIConfig{Timeout: 50 * time.Millisecond})
	waits := recordWaits(o)
	got, err := o.Embed(context.Background(), []string{"a"})
	if err != nil || len(got) != 1 {
		t.Fatalf("Embed = %v, %v; want the second attempt's vector", got, err)
	}
	if calls != 2 || len(*waits) != 1 {
		t.Errorf("%d calls and %d waits, want 2 and 1", calls, len(*waits))
	}
}

func TestOpenAICallerDeadlineStopsRetries(t *testing.T) {
	srv := &embeddingsServer{dims: 4, respond: failFirst(100, http.StatusServiceUnavailable, "")}
	o := newTestOpenAI(t, srv, OpenAIConfig{})
	ctx, cancel := context.WithCancel(context.Background())
	o.sleep = func(time.Duration) time.Duration { cancel(); return time.Hour } // the caller gives up while waiting
	_, err := o.Embed(ctx, []string{"a"})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if len(srv.requests) != 1 {
		t.Errorf("%d requests, want 1", len(srv.requests))
	}
}

func TestOpenAICache(t *testing.T) {
	srv := &embeddingsServer{dims: 4}
	o := newTestOpenAI(t, srv, OpenAIConfig{CacheSize: 3})
	first, err := o.Embed(context.Background(), []string{"a", "bb", "a"})
	if err != nil {
		t.Fatal(err)
	}
	// A text repeated in one call is sent once.
	if len(srv.requests) != 1 || strings.Join(srv.requests[0].Input, ",") != "a,bb" {
		t.Fatalf("requests %+v, want one with a,bb", srv.requests)
	}
	if first[0][3] != first[2][3] || &first[0][0] == &first[2][0] {
		t.Errorf("the repeated text's vectors differ or share memory")
	}
	first[0][0] = 42 // callers own their vectors: this must not reach the cache

	again, err := o.Embed(context.Background(), []string{"bb", "ccc", "a"})
	if err != nil {
		t.Fatal(err)
	}
	if len(srv.requests) != 2 || strings.Join(srv.requests[1].Input, ",") != "ccc" {
		t.Fatalf("second call sent %+v, want only ccc", srv.requests[1:])
	}
	if again[2][0] == 42 || again[2][0] != first[2][0] || again[0][3] != first[1][3] {
		t.Errorf("cached vectors %v, want the first call's", again)
	}
	// Capacity 3: a, bb, ccc are cached; dddd evicts the least recently used.
	if _, err := o.Embed(context.Background(), []string{"dddd"}); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Embed(context.Background(), []string{"bb"}); err != nil {
		t.Fatal(err)
	}
	if len(srv.requests) != 4 || strings.Join(srv.requests[3].Input, ",") != "bb" {
		t.Errorf("after eviction: requests %+v, want bb sent again", srv.requests[3:])
	}
	// Off: every call goes out.
	off := newTestOpenAI(t, &embeddingsServer{dims: 4}, OpenAIConfig{CacheSize: -1})
	for i := 0; i < 2; i++ {
		if _, err := off.Embed(context.Background(), []string{"a"}); err != nil {
			t.Fatal(err)
		}
	}
}
