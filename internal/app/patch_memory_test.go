package app

import (
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/api"
)

// TestPatchMemoryEndToEnd: a fact retired through PATCH (invalid_at in the past) is no longer
// recalled, and comes back when invalid_at is cleared; the change survives a restart.
func TestPatchMemoryEndToEnd(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	var created api.CreateMemoriesResponse
	s.must("POST", "/v1/namespaces/a/memories", `{"memories":[
		{"kind":"fact","content":"Nadia keeps her bees on the roof of the old cannery."},
		{"kind":"fact","content":"The cannery roof was repaired in March."}]}`, "", 201, &created)
	bees := created.Memories[0].ID
	recalled := func(s *testServer) bool {
		t.Helper()
		var rec api.RecallResponse
		s.must("POST", "/v1/namespaces/a/recall", `{"mode":"search","conversation_id":"c1","query":"Nadia bees cannery roof","limit":5}`, "", 200, &rec)
		for _, r := range rec.Results {
			if r.ID == bees {
				return true
			}
		}
		return false
	}
	if !recalled(s) {
		t.Fatal("the fact is not recalled before the patch")
	}
	yesterday := time.Now().UTC().Add(-24 * time.Hour).Format(time.RFC3339)
	var m api.Memory
	s.must("PATCH", "/v1/namespaces/a/memories/"+bees, `{"invalid_at":"`+yesterday+`","importance":0.8}`, "", 200, &m)
	if m.InvalidAt.Format(time.RFC3339) != yesterday || m.Importance != 0.8 || !strings.Contains(m.Content, "bees") {
		t.Fatalf("patched = %+v", m)
	}
	if recalled(s) {
		t.Fatal("a fact no longer true is still recalled")
	}
	if err := s.m.Close(); err != nil {
		t.Fatal(err)
	}

	s = startServer(t, dir)
	s.must("GET", "/v1/namespaces/a/memories/"+bees, "", "", 200, &m)
	if m.InvalidAt.Format(time.RFC3339) != yesterday || m.Importance != 0.8 {
		t.Fatalf("after a restart = %+v", m)
	}
	if recalled(s) {
		t.Fatal("after a restart the retired fact is recalled")
	}
	var cleared api.Memory // a fresh value: decoding leaves absent fields as they were
	s.must("PATCH", "/v1/namespaces/a/memories/"+bees, `{"invalid_at":null}`, "", 200, &cleared)
	if !cleared.InvalidAt.IsZero() || cleared.Importance != 0.8 || !recalled(s) {
		t.Fatalf("clearing invalid_at: %+v", cleared)
	}
}
