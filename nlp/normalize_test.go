package nlp_test

import (
	"testing"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/nlp"
)

// The names nlp returns must already be concept names, or ingest and recall would create
// concept ids that differ from the ones the store holds. nlp cannot import models, so this
// external test checks the two agree.
func TestMentionNamesAreNormalizedConcepts(t *testing.T) {
	text := "Hey Caroline! We saw Spider-Man & the Lord  of the Rings in New York, Rock'n'Roll!"
	for _, m := range nlp.ExtractConcepts(text, nil, 0) {
		if got := models.NormalizeConcept(m.Name); got != m.Name {
			t.Errorf("mention %q normalizes to %q", m.Name, got)
		}
	}
}

func FuzzExtractConcepts(f *testing.F) {
	for _, s := range []string{
		"", "Hey Caroline! I went to the LGBTQ support group yesterday.",
		"my support group meets near the pottery studio; pottery is calming",
		"Spider-Man & Rock'n'Roll — São Paulo's ÉCOLE", "\xff\xfe Bad\x00Name",
	} {
		f.Add(s, 0)
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, text string, limit int) {
		// known accepts phrases of an even length: some arbitrary, deterministic subset.
		known := func(p string) bool {
			if p == "" || models.NormalizeConcept(p) != p {
				t.Fatalf("known asked about %q, not a normalized phrase", p)
			}
			return len(p)%2 == 0
		}
		got := nlp.ExtractConcepts(text, known, limit)
		if limit > 0 && len(got) > limit {
			t.Fatalf("ExtractConcepts(%q, %d) returned %d mentions", text, limit, len(got))
		}
		seen := map[string]bool{}
		for _, m := range got {
			if m.Name == "" || models.NormalizeConcept(m.Name) != m.Name {
				t.Fatalf("ExtractConcepts(%q): name %q is not normalized", text, m.Name)
			}
			if seen[m.Name] {
				t.Fatalf("ExtractConcepts(%q): %q twice", text, m.Name)
			}
			seen[m.Name] = true
			switch m.Kind {
			case nlp.KindEntity, nlp.KindTopic:
			default:
				t.Fatalf("ExtractConcepts(%q): kind %q", text, m.Kind)
			}
		}
	})
}
