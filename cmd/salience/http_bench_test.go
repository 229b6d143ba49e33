package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/salience-ai/salience/api"
)

// Benchmarks over HTTP on loopback through the real server (Main, store, embedder, ingest,
// recall): what a bot on the same machine sees. Run: make bench, or
// go test -run='^$' -bench=HTTP -benchtime=2s ./cmd/salience

// benchServer starts a server for a benchmark on a fresh directory.
func benchServer(b *testing.B) (*Main, string) {
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
	base := "http://" + m.Addr()
	for !m.store.Ready() {
		http.Get(base + "/readyz")
	}
	return m, base
}

var benchTopics = []string{"bees", "harbour", "lighthouse", "violin", "garden", "compiler", "marathon", "bakery", "glacier", "library"}

func benchContent(i int) string {
	t := benchTopics[i%len(benchTopics)]
	return fmt.Sprintf("Note %d: the %s story from week %d, with the %s and the %s details.", i, t, i%52, benchTopics[(i/7)%len(benchTopics)], benchTopics[(i/13)%len(benchTopics)])
}

func post(b *testing.B, client *http.Client, url, body string, want int) {
	res, err := client.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != want {
		b.Fatalf("POST %s = %d", url, res.StatusCode)
	}
}

// BenchmarkHTTPIngest is single-memory ingest from concurrent callers (one durable
// transaction each).
func BenchmarkHTTPIngest(b *testing.B) {
	_, base := benchServer(b)
	url := base + "/v1/namespaces/bench/memories"
	var n atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		client := &http.Client{}
		for pb.Next() {
			body, _ := json.Marshal(api.MemoryInput{Kind: "fact", Content: benchContent(int(n.Add(1)))})
			post(b, client, url, string(body), http.StatusCreated)
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "memories/s")
}

// BenchmarkHTTPIngestBatch is ingest in batches of 100.
func BenchmarkHTTPIngestBatch(b *testing.B) {
	_, base := benchServer(b)
	url := base + "/v1/namespaces/bench/memories"
	client := &http.Client{}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var req api.CreateMemoriesRequest
		for j := range 100 {
			req.Memories = append(req.Memories, api.MemoryInput{Kind: "turn", Content: benchContent(i*100 + j)})
		}
		body, _ := json.Marshal(req)
		post(b, client, url, string(body), http.StatusCreated)
	}
	b.ReportMetric(float64(b.N*100)/b.Elapsed().Seconds(), "memories/s")
}

// BenchmarkHTTPRecall is search recall over 5,000 memories from concurrent callers.
func BenchmarkHTTPRecall(b *testing.B) {
	_, base := benchServer(b)
	client := &http.Client{}
	for i := 0; i < 5000; i += 500 {
		var req api.CreateMemoriesRequest
		for j := range 500 {
			req.Memories = append(req.Memories, api.MemoryInput{Kind: "fact", Content: benchContent(i + j)})
		}
		body, _ := json.Marshal(req)
		post(b, client, base+"/v1/namespaces/bench/memories", string(body), http.StatusCreated)
	}
	url := base + "/v1/namespaces/bench/recall"
	var n atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		client := &http.Client{}
		for pb.Next() {
			i := int(n.Add(1))
			q := fmt.Sprintf(`{"mode":"search","query":"the %s story from week %d","conversation_id":"c%d"}`, benchTopics[i%len(benchTopics)], i%52, i%8)
			post(b, client, url, q, http.StatusOK)
		}
	})
}
