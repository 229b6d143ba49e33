package embed

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// embeddingsServer speaks /v1/embeddings like OpenAI: for an input of n bytes it returns
// the vector (3, 0, …, 0, 4n), so a test can check both normalization and that each vector
// went to its own text. respond may rewrite the response, or write its own and return true.
type embeddingsServer struct {
	dims int

	mu       sync.Mutex
	requests []embeddingsRequest
	auth     []string
	respond  func(w http.ResponseWriter, r *http.Request, req embeddingsRequest, resp *embeddingsResponse) bool
}

type embeddingsRequest struct {
	Input []string `json:"input"`
	Model string   `json:"model"`
}

type embeddingsResponse struct {
	Object string `json:"object"`
	Data   []struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
	Model string `json:"model"`
	Usage struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

func (s *embeddingsServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.NotFound(w, r)
		return
	}
	var req embeddingsRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	s.mu.Unlock()

	resp := embeddingsResponse{Object: "list", Model: req.Model}
	// Answer in reverse order: clients must place vectors by index.
	for i := len(req.Input) - 1; i >= 0; i-- {
		v := make([]float32, s.dims)
		v[0] = 3
		v[s.dims-1] = float32(4 * len(req.Input[i]))
		resp.Data = append(resp.Data, struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}{"embedding", i, v})
	}
	resp.Usage.PromptTokens = len(req.Input)
	resp.Usage.TotalTokens = len(req.Input)
	if s.respond != nil && s.respond(w, r, req, &resp) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

func newTestOpenAI(t *testing.T, srv *embeddingsServer, cfg OpenAIConfig) *OpenAI {
	t.Helper()
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	cfg.BaseURL = hs.URL + "/v1/"
	if cfg.Model == "" {
		cfg.Model = "test-embed"
	}
	if cfg.Dims == 0 {
		cfg.Dims = srv.dims
	}
	o, err := NewOpenAI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	recordWaits(o) // retries wait nothing in tests
	return o
}

func TestOpenAIEmbedBatchesAndNormalizes(t *testing.T) {
	srv := &embeddingsServer{dims: 4}
	o := newTestOpenAI(t, srv, OpenAIConfig{APIKey: "sk-test", BatchSize: 2})
	if o.Dims() != 4 || o.Name() != "openai:test-embed:4" {
		t.Errorf("Dims %d Name %q", o.Dims(), o.Name())
	}
	texts := []string{"a", "bb", "ccc", "dddd", "eeeee"}
	got, err := o.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	// Batches of 2: [a b] [c d] [e].
	if len(srv.requests) != 3 {
		t.Fatalf("%d requests, want 3", len(srv.requests))
	}
	var sent []string
	for i, r := range srv.requests {
		sent = append(sent, r.Input...)
		if r.Model != "test-embed" {
			t.Errorf("request %d model %q", i, r.Model)
		}
		if srv.auth[i] != "Bearer sk-test" {
			t.Errorf("request %d Authorization %q", i, srv.auth[i])
		}
	}
	if strings.Join(sent, ",") != strings.Join(texts, ",") {
		t.Errorf("sent %q", sent)
	}
	if len(got) != len(texts) {
		t.Fatalf("%d vectors, want %d", len(got), len(texts))
	}
	for i, v := range got {
		// Text i has i+1 bytes: (3, 0, 0, 4(i+1)) normalized.
		n := float64(4 * (i + 1))
		l := math.Sqrt(9 + n*n)
		want := []float32{float32(3 / l), 0, 0, float32(n / l)}
		for k := range want {
			if math.Abs(float64(v[k]-want[k])) > 1e-6 {
				t.Fatalf("vector %d = %v, want %v", i, v, want)
			}
		}
	}
}

func TestOpenAIEmbedEmpty(t *testing.T) {
	srv := &embeddingsServer{dims: 4}
	o := newTestOpenAI(t, srv, OpenAIConfig{})
	got, err := o.Embed(context.Background(), nil)
	if err != nil || len(got) != 0 || len(srv.requests) != 0 {
		t.Errorf("Embed(nil) = %d vectors, %v, %d requests; want none", len(got), err, len(srv.requests))
	}
}

func TestOpenAIEmbedErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		respond func(w http.ResponseWriter, r *http.Request, req embeddingsRequest, resp *embeddingsResponse) bool
		want    string
	}{
		{
			name: "dims mismatch",
			respond: func(_ http.ResponseWriter, _ *http.Request, _ embeddingsRequest, resp *embeddingsResponse) bool {
				resp.Data[0].Embedding = resp.Data[0].Embedding[:3]
				return false
			},
			want: "has 3 dims, want 4",
		},
		{
			name: "too few vectors",
			respond: func(_ http.ResponseWriter, _ *http.Request, _ embeddingsRequest, resp *embeddingsResponse) bool {
				resp.Data = resp.Data[1:]
				return false
			},
			want: "got 1 vectors for 2 texts",
		},
		{
			name: "index twice",
			respond: func(_ http.ResponseWriter, _ *http.Request, _ embeddingsRequest, resp *embeddingsResponse) bool {
				resp.Data[1].Index = resp.Data[0].Index
				return false
			},
			want: "returned twice",
		},
		{
			name: "index out of range",
			respond: func(_ http.ResponseWriter, _ *http.Request, _ embeddingsRequest, resp *embeddingsResponse) bool {
				resp.Data[0].Index = 7
				return false
			},
			want: "index 7 out of range",
		},
		{
			name: "HTTP 500",
			respond: func(w http.ResponseWriter, _ *http.Request, _ embeddingsRequest, _ *embeddingsResponse) bool {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = w.Write([]byte(`{"error":{"message":"model overloaded","type":"server_error"}}`))
				return true
			},
			want: "model overloaded",
		},
		{
			name: "malformed JSON",
			respond: func(w http.ResponseWriter, _ *http.Request, _ embeddingsRequest, _ *embeddingsResponse) bool {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"object":"list","data":[{"index":0,"embedding":[1,2,`))
				return true
			},
			want: "unexpected EOF",
		},
		{
			name: "not JSON",
			respond: func(w http.ResponseWriter, _ *http.Request, _ embeddingsRequest, _ *embeddingsResponse) bool {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`<html>gateway</html>`))
				return true
			},
			want: "invalid character '<'",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := &embeddingsServer{dims: 4, respond: tc.respond}
			o := newTestOpenAI(t, srv, OpenAIConfig{})
			got, err := o.Embed(context.Background(), []string{"x", "y"})
			if err == nil {
				t.Fatalf("Embed succeeded with %d vectors, want an error containing %q", len(got), tc.want)
			}
			if got != nil {
				t.Errorf("Embed returned %d vectors with the error", len(got))
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "embed: openai: ") {
				t.Errorf("err = %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestOpenAIDeadline(t *testing.T) {
	release := make(chan struct{})
	// The server hangs until the client gives up (or the test ends), so Embed returning at
	// all, with context.DeadlineExceeded, proves the deadline cut the call: no wall-clock
	// bound is needed (and none is asserted).
	srv := &embeddingsServer{dims: 4, respond: func(_ http.ResponseWriter, r *http.Request, _ embeddingsRequest, _ *embeddingsResponse) bool {
		select {
		case <-r.Context().Done():
		case <-release:
		}
		return true
	}}
	defer close(release)

	t.Run("caller's deadline", func(t *testing.T) {
		// An attempt limit of an hour leaves the caller's deadline the only one that can end
		// the call while the test runs.
		o := newTestOpenAI(t, srv, OpenAIConfig{Timeout: time.Hour})
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err := o.Embed(ctx, []string{"slow"})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want context.DeadlineExceeded", err)
		}
	})
	t.Run("configured timeout", func(t *testing.T) {
		o := newTestOpenAI(t, srv, OpenAIConfig{Timeout: 100 * time.Millisecond, Retries: -1}) // retries: TestOpenAIRetriesTimeouts
		_, err := o.Embed(context.Background(), []string{"slow"})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want context.DeadlineExceeded", err)
		}
	})
}

func TestNewOpenAIValidates(t *testing.T) {
	for _, tc := range []struct {
		cfg  OpenAIConfig
		want string
	}{
		{OpenAIConfig{Dims: 8}, "model is required"},
		{OpenAIConfig{Model: "m"}, "dims must be positive"},
	} {
		if _, err := NewOpenAI(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewOpenAI(%+v) = %v, want an error containing %q", tc.cfg, err, tc.want)
		}
	}
	o, err := NewOpenAI(OpenAIConfig{Model: "m", Dims: 8})
	if err != nil {
		t.Fatal(err)
	}
	if o.cfg.BatchSize != DefaultBatchSize || o.cfg.Timeout != DefaultOpenAITimeout {
		t.Errorf("defaults: batch %d timeout %v", o.cfg.BatchSize, o.cfg.Timeout)
	}
}
