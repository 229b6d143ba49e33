package settings_test

import (
	"encoding/json"
	"testing"

	"github.com/salience-ai/salience/settings"
)

// FuzzParse: a stored record may have been written by hand or by another version; whatever
// it holds, Parse either refuses it or returns settings that validate and survive a round
// trip through their own JSON unchanged.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `{"rerank":"on"}`, `{"version":3,"decay":{"policy":"fsrs"}}`,
		`{"weights":{"search":{"relevance":0.5,"importance":0.5}},"diversity":0.2,"startup":{"anchors":4}}`,
		`{"weights":{"startup":{"relevance":1}}}`, `{"freshness_half_life_hours":1e308}`, `[1]`, `{"diversity":null}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		s, err := settings.Parse(raw)
		if err != nil {
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("Parse(%q) accepted settings that do not validate: %v", raw, err)
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		again, err := settings.Parse(string(b))
		if err != nil {
			t.Fatalf("the re-encoded %s does not parse: %v", b, err)
		}
		b2, _ := json.Marshal(again)
		if string(b) != string(b2) {
			t.Fatalf("round trip changed the settings:\n%s\n%s", b, b2)
		}
	})
}
