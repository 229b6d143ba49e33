package server

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/salience-ai/salience/api"
)

// BenchmarkDecodeMemoriesBatch measures the strict decoder on a batch of 100 memories, the
// server's own share of an ingest request.
func BenchmarkDecodeMemoriesBatch(b *testing.B) {
	var req api.CreateMemoriesRequest
	for i := range 100 {
		req.Memories = append(req.Memories, api.MemoryInput{
			Kind: "turn", Content: fmt.Sprintf("message %d: the heron came back to the pond by the old mill this morning", i),
			Source: &api.Source{ConversationID: "c1", Speaker: "sam"}, Domains: []string{"birds"},
		})
	}
	body, _ := json.Marshal(req)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := decodeMemories(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeRecall measures decoding a typical ambient recall request.
func BenchmarkDecodeRecall(b *testing.B) {
	body := []byte(`{"conversation_id":"c1","mode":"ambient","messages":[{"speaker":"u","content":"my build fails on the linker step again","at":"2024-05-01T10:00:00Z"},{"speaker":"bot","content":"which target?"}],"conversation_type":"debugging","limit":8,"token_budget":600}`)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeRecallBody(body, "ns"); err != nil {
			b.Fatal(err)
		}
	}
}
