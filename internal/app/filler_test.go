package app

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/api"
)

// Filler never decides (issue 41, failure 3), over HTTP: in a new namespace of five memories
// the message shares "place", a common English word, with a short memory and "harmonica", a
// rare one, with a long memory. Search and ambient recall (gate off, so the order shows) put
// the harmonica first, with the higher p_use, and ambient recall under the default gate never
// volunteers the filler-only match. The lexical embedder, because the static one's vectors
// already tell these two apart: this is the text index's part.
func TestFillerNeverDecidesOverHTTP(t *testing.T) {
	s := startServer(t, "", "--embedder", "local")
	const ns = "filler"
	var in []api.MemoryInput
	for i, c := range []string{
		"We could grab dinner at my place on Friday.",
		"Lena has been learning the harmonica from online videos since her brother gave her his old blues harp for her birthday.",
		"The bakery on Elm Street closes early on Sundays.",
		"Marcus is allergic to peanuts.",
		"The printer at work keeps jamming.",
	} {
		in = append(in, api.MemoryInput{Kind: "fact", Content: c, CreatedAt: time.Now().Add(-time.Duration(48+i) * time.Hour)})
	}
	body, _ := json.Marshal(api.CreateMemoriesRequest{Memories: in})
	s.ingest(ns, string(body), "")

	const ask = "Do you know a place to fix a harmonica?"
	for _, req := range []api.RecallRequest{
		{Mode: "search", Query: ask, ConversationID: "c1"},
		{Mode: "ambient", Messages: []api.Message{{Speaker: "user", Content: "hi there"}, {Speaker: "user", Content: ask}}, ConversationID: "c2",
			ThresholdPolicy: "off"},
	} {
		r := s.recall(ns, req, "")
		var got []string
		for _, res := range r.Results {
			got = append(got, res.Content)
		}
		if len(got) == 0 || !strings.Contains(got[0], "harmonica") {
			t.Fatalf("%s: results %q, want the harmonica memory first", req.Mode, got)
		}
		for _, res := range r.Results[1:] {
			if res.PUse >= r.Results[0].PUse {
				t.Errorf("%s: %q has p_use %.2f, not below the harmonica's %.2f", req.Mode, res.Content, res.PUse, r.Results[0].PUse)
			}
		}
	}
	gated := s.recall(ns, api.RecallRequest{Mode: "ambient", Messages: []api.Message{{Speaker: "user", Content: ask}},
		ConversationID: "c3", ThresholdPolicy: "fixed:default"}, "")
	for _, res := range gated.Results {
		if strings.Contains(res.Content, "dinner") {
			t.Errorf("ambient recall under the default gate volunteered the filler-only match %q (p_use %.2f)", res.Content, res.PUse)
		}
	}
}
