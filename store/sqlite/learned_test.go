package sqlite

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/nlp"
)

// The learned field is written through with PutMemory, searched with the content, dropped
// with the memory, and rebuilt at start exactly as it was written through.
func TestLearnedFieldWrittenThroughAndRebuilt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "salience.db")
	s := openAt(t, path)
	if err := s.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	var ws []*models.MemoryWrite
	for _, c := range []struct{ id, text string }{
		{"m1", "I finished the sunset piece last night"},
		{"m2", "the painting class starts on monday"},
		{"m3", "the sunset over the lake was lovely"},
	} {
		ws = append(ws, &models.MemoryWrite{Memory: &models.Memory{ID: c.id, Namespace: "ns", Kind: models.KindTurn,
			Content: c.text, CreatedAt: at, Confidence: 0.5}})
	}
	if err := s.CreateMemories(ctx, ws); err != nil {
		t.Fatal(err)
	}
	ids := func(s *Store, q string) []string {
		hits, err := s.SearchText(ctx, "ns", q, 10)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, h := range hits {
			out = append(out, h.ID)
		}
		return out
	}
	if got := ids(s, "watercolor"); len(got) != 0 {
		t.Fatalf("before learning, %q found %v", "watercolor", got)
	}
	err := s.Update(ctx, func(tx models.Tx) error {
		m, err := tx.GetMemory("ns", "m1")
		if err != nil {
			return err
		}
		m.Learned = []models.LearnedTerm{{Term: nlp.Terms("watercolor")[0], Weight: 1, At: at}, {Term: nlp.Terms("lake")[0], Weight: 1, At: at}}
		return tx.PutMemory(m)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(s, "watercolor"); len(got) != 1 || got[0] != "m1" {
		t.Errorf("written through: %q found %v, want m1 by its learned word", "watercolor", got)
	}
	// A content match ranks above a learned one (weight 0.3 of a content occurrence).
	if got := ids(s, "lake"); len(got) != 2 || got[0] != "m3" || got[1] != "m1" {
		t.Errorf("%q found %v, want m3 (content) before m1 (learned)", "lake", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openAt(t, path)
	if err := s2.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	if got := ids(s2, "watercolor"); len(got) != 1 || got[0] != "m1" {
		t.Errorf("rebuilt: %q found %v, want m1", "watercolor", got)
	}
	m, err := s2.GetMemory(ctx, "ns", "m1")
	if err != nil || len(m.Learned) != 2 || m.Learned[0] != (models.LearnedTerm{Term: nlp.Terms("watercolor")[0], Weight: 1, At: at}) {
		t.Errorf("m1 learned %+v, %v", m, err)
	}
	if err := s2.DeleteMemory(ctx, "ns", "m1"); err != nil {
		t.Fatal(err)
	}
	if got := ids(s2, "watercolor"); len(got) != 0 {
		t.Errorf("after delete: %v", got)
	}
}
