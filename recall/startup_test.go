package recall

import (
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

// TestBriefFactsOrder: importance first, then confidence, then the newest; only memories
// that may come back unasked; at most n.
func TestBriefFactsOrder(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	f := func(id string, importance, confidence float64, ago time.Duration) *models.Memory {
		return &models.Memory{ID: id, Kind: models.KindFact, Importance: importance, Confidence: confidence, CreatedAt: now.Add(-ago)}
	}
	invalid := f("invalid", 1, 1, time.Hour)
	invalid.InvalidAt = now.Add(-time.Minute)
	later := f("invalid-later", 0.1, 0.1, time.Hour)
	later.InvalidAt = now.Add(time.Hour) // still true now
	chunk := f("chunk", 1, 1, time.Hour)
	chunk.ParentID = "doc"
	cooling := f("cooling", 1, 1, time.Hour)
	cooling.Schedule.CooldownTo = now.Add(time.Hour)
	ms := []*models.Memory{f("old", 0.5, 0.5, 3*time.Hour), invalid, chunk, cooling, later,
		f("trusted", 0.5, 0.9, 4*time.Hour), f("important", 0.8, 0.1, 5*time.Hour), f("new", 0.5, 0.5, time.Hour)}
	ids := func(ms []*models.Memory) string {
		var s []string
		for _, m := range ms {
			s = append(s, m.ID)
		}
		return strings.Join(s, ",")
	}
	if got, want := ids(briefFacts(ms, now, 10)), "important,trusted,new,old,invalid-later"; got != want {
		t.Errorf("briefFacts = %s, want %s", got, want)
	}
	if got, want := ids(briefFacts(ms, now, 2)), "important,trusted"; got != want {
		t.Errorf("briefFacts n=2 = %s, want %s", got, want)
	}
}
