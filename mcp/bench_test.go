package mcp_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/client"
	"github.com/salience-ai/salience/internal/testserver"
)

// BenchmarkAmbientRecall compares one ambient recall through the REST API with the same
// recall as an MCP tool call at /mcp/{ns}, on 200 memories: the difference is what the MCP
// layer costs (JSON-RPC, a server per stateless request, the in-process API call).
func BenchmarkAmbientRecall(b *testing.B) {
	srv := testserver.Start(b, testserver.Options{})
	c, _ := client.New(srv.URL)
	ns := c.Namespace("bench")
	ctx := context.Background()
	var ms []api.MemoryInput
	for i := range 200 {
		ms = append(ms, api.MemoryInput{Kind: "fact", Content: fmt.Sprintf("Fact %d: the keeper of lighthouse %d logs the weather at dawn.", i, i%17)})
	}
	if _, err := ns.StoreBatch(ctx, ms); err != nil {
		b.Fatal(err)
	}
	b.Run("rest", func(b *testing.B) {
		for b.Loop() {
			if _, err := ns.Recall(ctx, api.RecallRequest{ConversationID: "c", Query: "who logs the weather at lighthouse 5?"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("mcp", func(b *testing.B) {
		mc := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0"}, nil)
		s, err := mc.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp/bench", HTTPClient: http.DefaultClient}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		args := map[string]any{"message": "who logs the weather at lighthouse 5?", "conversation_id": "c"}
		for b.Loop() {
			res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "ambient_recall", Arguments: args})
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
	})
}
