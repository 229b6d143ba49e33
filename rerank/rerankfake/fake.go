// Package rerankfake is a stand-in for an OpenAI-compatible chat-completions endpoint that
// answers rerank prompts, for benchmarks and evaluation runs that must not leave the
// machine: it waits a set latency, then ranks the candidates by how many of the turn's
// words each shares (ties keep the order given), as strict JSON.
package rerankfake

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Handler serves POST {base}/chat/completions.
type Handler struct {
	// Latency is how long each answer takes; the wait ends early when the client gives up.
	Latency time.Duration
}

var candidateLine = regexp.MustCompile(`^\[(m\d+)\] (.*)$`)

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	_, _ = io.Copy(io.Discard, r.Body) // to EOF: only then does the server see a client leave
	t := time.NewTimer(h.Latency)
	defer t.Stop()
	select {
	case <-r.Context().Done():
		return
	case <-t.C:
	}
	ids := Rank(req.Messages[len(req.Messages)-1].Content)
	answer, _ := json.Marshal(map[string][]string{"ranking": ids})
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "fake", "object": "chat.completion", "model": req.Model,
		"choices": []map[string]any{{
			"index": 0, "finish_reason": "stop",
			"message": map[string]string{"role": "assistant", "content": string(answer)},
		}},
	})
}

// Rank reads a rerank prompt ("Turn:" then "[mN] text" lines) and returns the candidate
// ids, most words shared with the turn first.
func Rank(prompt string) []string {
	turn, cands, _ := strings.Cut(prompt, "\n\nCandidates:\n")
	words := map[string]bool{}
	for _, w := range strings.Fields(strings.ToLower(strings.TrimPrefix(turn, "Turn:\n"))) {
		if w = strings.Trim(w, ".,;:!?\"'()"); len(w) > 2 {
			words[w] = true
		}
	}
	type scored struct {
		id    string
		score int
	}
	var list []scored
	for _, line := range strings.Split(cands, "\n") {
		m := candidateLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		s := 0
		for _, w := range strings.Fields(strings.ToLower(m[2])) {
			if words[strings.Trim(w, ".,;:!?\"'()")] {
				s++
			}
		}
		list = append(list, scored{m[1], s})
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].score > list[j].score })
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = s.id
	}
	return out
}

// Start serves a fake on a loopback port and returns its base URL (with /v1) and a stop
// function.
func Start(latency time.Duration) (baseURL string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("rerank fake: %w", err)
	}
	srv := &http.Server{Handler: &Handler{Latency: latency}, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln) // returns http.ErrServerClosed once stop is called
	}()
	return "http://" + ln.Addr().String() + "/v1", func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	}, nil
}
