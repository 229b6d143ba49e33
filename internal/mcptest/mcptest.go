// Package mcptest exercises the MCP tools through an MCP client session, whatever the
// transport: the tests of package mcp (streamable HTTP at /mcp/{ns}) and of `salience mcp`
// (stdio) run the same checks against the real server.
package mcptest

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tools are the tools every transport must list.
var Tools = []string{"ambient_recall", "experiment_report", "predict_memories", "read_full_memory", "remember", "report_engagement", "search_memories", "update_memory"}

// Shown is a memory in the structured output of ambient_recall and search_memories.
type Shown struct {
	MemoryID    string    `json:"memory_id"`
	Namespace   string    `json:"namespace"`
	SurfacingID string    `json:"surfacing_id"`
	Kind        string    `json:"kind"`
	Content     string    `json:"content"`
	Fragment    string    `json:"fragment"`
	Volunteered bool      `json:"volunteered"`
	CreatedAt   time.Time `json:"created_at"`
}

// Recall is the structured output of ambient_recall and search_memories.
type Recall struct {
	Context  string  `json:"context"`
	TurnID   string  `json:"turn_id"`
	Memories []Shown `json:"memories"`
}

// Call calls a tool and returns its result; a protocol error fails the test.
func Call(t testing.TB, s *mcp.ClientSession, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v; failures must be tool errors", tool, err)
	}
	return res
}

// Text joins the text content of a result.
func Text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// OK calls a tool that must succeed and decodes its structured output into out (when not
// nil); it returns the text content.
func OK(t testing.TB, s *mcp.ClientSession, tool string, args map[string]any, out any) string {
	t.Helper()
	res := Call(t, s, tool, args)
	if res.IsError {
		t.Fatalf("%s(%v) failed: %s", tool, args, Text(res))
	}
	if out != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: structured content %s: %v", tool, b, err)
		}
	}
	return Text(res)
}

// Fails calls a tool that must fail with a tool error whose text contains want.
func Fails(t testing.TB, s *mcp.ClientSession, tool string, args map[string]any, want string) {
	t.Helper()
	res := Call(t, s, tool, args)
	if !res.IsError {
		t.Errorf("%s(%v) succeeded with %q, want a tool error", tool, args, Text(res))
		return
	}
	if !strings.Contains(Text(res), want) {
		t.Errorf("%s(%v) error = %q, want it to contain %q", tool, args, Text(res), want)
	}
}

// Exercise lists the tools and calls each, successes and failures, on a session whose
// namespace is empty.
func Exercise(t *testing.T, s *mcp.ClientSession) {
	t.Helper()
	ctx := context.Background()
	list, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		if len(tool.Description) < 100 || tool.InputSchema == nil {
			t.Errorf("tool %s: description %q and input schema %v: a model needs both", tool.Name, tool.Description, tool.InputSchema)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, Tools) {
		t.Fatalf("tools = %v, want %v", names, Tools)
	}

	// An empty namespace: the startup briefing says so instead of inventing anything.
	var startup Recall
	if text := OK(t, s, "ambient_recall", map[string]any{"conversation_id": "c1"}, &startup); text != "No relevant memories.\n" || len(startup.Memories) != 0 || startup.TurnID == "" {
		t.Errorf("startup on an empty namespace = %q %+v", text, startup)
	}

	// remember: a fact and a long document the server chunks.
	var bees struct{ ID, Kind string }
	OK(t, s, "remember", map[string]any{"content": "Nadia keeps her bees on the roof of the old cannery.",
		"speaker": "nadia", "conversation_id": "c0", "concepts": []string{"bees", "cannery"}}, &bees)
	if bees.ID == "" || bees.Kind != "fact" {
		t.Fatalf("remember = %+v, want a fact with an id", bees)
	}
	long := strings.Repeat("The lighthouse keeper logs the weather every morning before dawn. ", 30) +
		"At the very end of the log he notes that the lamp needs a new mantle."
	var doc struct{ ID, Kind string }
	OK(t, s, "remember", map[string]any{"content": long, "kind": "document", "importance": 0.8}, &doc)

	// ambient_recall: the block and the surfacing ids, in the text and the structure.
	var amb Recall
	text := OK(t, s, "ambient_recall", map[string]any{"message": "Where does Nadia keep her bees?", "conversation_id": "c1",
		"recent_messages": []map[string]any{{"speaker": "user", "content": "I was thinking about honey."}}}, &amb)
	if len(amb.Memories) == 0 || amb.Memories[0].MemoryID != bees.ID || amb.Memories[0].SurfacingID == "" || !strings.Contains(amb.Context, "old cannery") {
		t.Fatalf("ambient_recall = %+v", amb)
	}
	if !strings.Contains(text, "old cannery") || !strings.Contains(text, "surfacing_id="+amb.Memories[0].SurfacingID) {
		t.Errorf("ambient_recall text lacks the memory or its surfacing id:\n%s", text)
	}

	// search_memories finds a fragment; read_full_memory hydrates it.
	var found Recall
	text = OK(t, s, "search_memories", map[string]any{"query": "lighthouse lamp mantle", "kinds": []string{"document"}, "limit": 3}, &found)
	if len(found.Memories) == 0 || found.Memories[0].MemoryID != doc.ID || found.Memories[0].Fragment == "" {
		t.Fatalf("search_memories = %+v, want a fragment of %s", found, doc.ID)
	}
	if !strings.Contains(text, "memory_id="+doc.ID) || !strings.Contains(text, "read_full_memory") {
		t.Errorf("search_memories text:\n%s", text)
	}
	var whole struct{ ID, Content string }
	OK(t, s, "read_full_memory", map[string]any{"id": found.Memories[0].MemoryID}, &whole)
	if whole.ID != doc.ID || whole.Content != long {
		t.Errorf("read_full_memory returned %d bytes of %s, want the whole %d of %s", len(whole.Content), whole.ID, len(long), doc.ID)
	}

	// report_engagement: applied once, then a repeat counts as already recorded, and a bad
	// surfacing is rejected (a result, not a failure).
	used := map[string]any{"surfacing_id": amb.Memories[0].SurfacingID, "type": "used"}
	var rep struct{ Applied, Duplicates, Rejected int }
	OK(t, s, "report_engagement", map[string]any{"events": []any{used}}, &rep)
	if rep.Applied != 1 {
		t.Errorf("report = %+v, want 1 applied", rep)
	}
	text = OK(t, s, "report_engagement", map[string]any{"events": []any{used,
		map[string]any{"surfacing_id": "no-such-surfacing", "type": "helpful"}}}, &rep)
	if rep.Applied != 0 || rep.Duplicates != 1 || rep.Rejected != 1 || !strings.Contains(text, "events[1].surfacing_id") {
		t.Errorf("repeat report = %+v %q, want 1 duplicate and 1 rejected naming events[1].surfacing_id", rep, text)
	}
	var after struct{ Confidence float64 }
	OK(t, s, "read_full_memory", map[string]any{"id": bees.ID}, &after)
	if after.Confidence <= 0.5 {
		t.Errorf("confidence after a use = %v, want above 0.5", after.Confidence)
	}

	// predict_memories: nothing learned yet in this namespace, so nothing predicted.
	var pred struct {
		TurnID   string `json:"turn_id"`
		Topics   []string
		Memories []any
	}
	if text := OK(t, s, "predict_memories", map[string]any{"conversation_id": "c1", "message": "Where does Nadia keep her bees?"}, &pred); text != "No memories predicted.\n" || len(pred.Memories) != 0 || pred.TurnID == "" {
		t.Errorf("predict_memories on a namespace with nothing learned = %q %+v", text, pred)
	}

	// update_memory: the fact stops being true, and search no longer finds it; undone, it does.
	var upd struct {
		ID         string
		InvalidAt  time.Time `json:"invalid_at"`
		Importance float64
	}
	OK(t, s, "update_memory", map[string]any{"id": bees.ID, "no_longer_true_since": "2026-01-01T00:00:00Z", "importance": 0.9}, &upd)
	if upd.ID != bees.ID || !upd.InvalidAt.Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) || upd.Importance != 0.9 {
		t.Errorf("update_memory = %+v", upd)
	}
	findsBees := func() bool {
		var r Recall
		OK(t, s, "search_memories", map[string]any{"query": "Nadia bees cannery roof"}, &r)
		for _, m := range r.Memories {
			if m.MemoryID == bees.ID {
				return true
			}
		}
		return false
	}
	if findsBees() {
		t.Error("a memory no longer true is still found")
	}
	OK(t, s, "update_memory", map[string]any{"id": bees.ID, "still_true": true}, nil)
	if !findsBees() {
		t.Error("a memory true again is not found")
	}

	// Failures are tool errors that say what to fix.
	Fails(t, s, "update_memory", map[string]any{"id": bees.ID}, "nothing to change")
	Fails(t, s, "update_memory", map[string]any{"id": bees.ID, "no_longer_true_since": "last week"}, "no_longer_true_since")
	Fails(t, s, "update_memory", map[string]any{"id": bees.ID, "importance": 7}, "importance")
	Fails(t, s, "update_memory", map[string]any{"id": "01J00000000000000000000000", "sensitive": true}, "not_found")
	Fails(t, s, "predict_memories", map[string]any{"conversation_id": " "}, "conversation_id")
	Fails(t, s, "read_full_memory", map[string]any{"id": "01J00000000000000000000000"}, "not_found")
	Fails(t, s, "read_full_memory", map[string]any{}, "id")
	Fails(t, s, "experiment_report", map[string]any{"experiment_id": "01J00000000000000000000000"}, "not_found")
	Fails(t, s, "experiment_report", map[string]any{"experiment_id": "x", "as_of": "last week"}, "as_of")
	Fails(t, s, "remember", map[string]any{"content": "x", "kind": "poem"}, "kind")
	Fails(t, s, "remember", map[string]any{"content": "x", "importance": 7}, "importance")
	Fails(t, s, "remember", map[string]any{"content": ""}, "content")
	Fails(t, s, "search_memories", map[string]any{"query": "bees", "since": "yesterday"}, "since must be an RFC 3339 time")
	Fails(t, s, "search_memories", map[string]any{"query": " "}, "query is empty")
	Fails(t, s, "report_engagement", map[string]any{"events": []any{}}, "events")
	Fails(t, s, "report_engagement", map[string]any{"events": []any{map[string]any{"surfacing_id": "x", "type": "loved"}}}, "type")
}
