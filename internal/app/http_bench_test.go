package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/eval"
)

// Benchmarks over HTTP on loopback through the real server (Main, store, embedder, ingest,
// recall): what a bot on the same machine sees. The corpus and queries are eval.Synth's, as
// in `salience bench recall`, so the two sets of numbers compare (the difference is HTTP and
// JSON). Run: make bench, or go test -run='^$' -bench=HTTP -benchtime=2s ./internal/app

// benchServer starts a server for a benchmark on a fresh directory.
func benchServer(b *testing.B) string {
	b.Helper()
	m := NewMain()
	m.Stdout, m.Stderr = io.Discard, io.Discard
	m.Getenv = func(string) string { return "" }
	if err := m.ParseFlags(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--data", b.TempDir(), "--log-level", "error"}); err != nil {
		b.Fatal(err)
	}
	if err := m.Run(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	for !m.store.Ready() {
		time.Sleep(5 * time.Millisecond)
	}
	return "http://" + m.Addr()
}

var benchNow = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// synthInput is the i-th synthetic memory in wire form.
func synthInput(s *eval.Synth, i int) api.MemoryInput {
	m := s.Memory(i, benchNow)
	return api.MemoryInput{Kind: string(m.Kind), Content: m.Content, CreatedAt: m.CreatedAt,
		Source: &api.Source{ConversationID: m.Source.ConversationID, Speaker: m.Source.Speaker}}
}

func post(b *testing.B, client *http.Client, url string, body []byte, want int) {
	res, err := client.Post(url, "application/json", strings.NewReader(string(body)))
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != want {
		b.Fatalf("POST %s = %d", url, res.StatusCode)
	}
}

// BenchmarkHTTPIngest is single-memory ingest from concurrent callers: one durable
// transaction per memory.
func BenchmarkHTTPIngest(b *testing.B) {
	url := benchServer(b) + "/v1/namespaces/bench/memories"
	var mu sync.Mutex
	syn := eval.NewSynth(1)
	next := 0
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		client := &http.Client{}
		for pb.Next() {
			mu.Lock()
			in := synthInput(syn, next)
			next++
			mu.Unlock()
			body, _ := json.Marshal(in)
			post(b, client, url, body, http.StatusCreated)
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "memories/s")
}

// BenchmarkHTTPIngestBatch is ingest in batches of 100 memories.
func BenchmarkHTTPIngestBatch(b *testing.B) {
	url := benchServer(b) + "/v1/namespaces/bench/memories"
	client := &http.Client{}
	syn := eval.NewSynth(1)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var req api.CreateMemoriesRequest
		for j := range 100 {
			req.Memories = append(req.Memories, synthInput(syn, i*100+j))
		}
		body, _ := json.Marshal(req)
		post(b, client, url, body, http.StatusCreated)
	}
	b.ReportMetric(float64(b.N*100)/b.Elapsed().Seconds(), "memories/s")
}

// BenchmarkHTTPRecall is search recall over 10,000 memories from concurrent callers.
func BenchmarkHTTPRecall(b *testing.B) {
	base := benchServer(b)
	client := &http.Client{}
	syn := eval.NewSynth(1)
	const corpus = 10000
	for i := 0; i < corpus; i += 1000 {
		var req api.CreateMemoriesRequest
		for j := range 1000 {
			req.Memories = append(req.Memories, synthInput(syn, i+j))
		}
		body, _ := json.Marshal(req)
		post(b, client, base+"/v1/namespaces/bench/memories", body, http.StatusCreated)
	}
	queries := make([][]byte, 1000)
	for i := range queries {
		queries[i], _ = json.Marshal(api.RecallRequest{Mode: "search", Query: syn.Query(), ConversationID: fmt.Sprintf("bench-%d", i%100), Rerank: "off"})
	}
	url := base + "/v1/namespaces/bench/recall"
	var mu sync.Mutex
	next := 0
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		client := &http.Client{}
		for pb.Next() {
			mu.Lock()
			q := queries[next%len(queries)]
			next++
			mu.Unlock()
			post(b, client, url, q, http.StatusOK)
		}
	})
}
