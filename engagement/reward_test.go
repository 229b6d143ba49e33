package engagement

import (
	"testing"

	"github.com/salience-ai/salience/models"
)

func TestReward(t *testing.T) {
	for ev, want := range map[models.EventType]float64{
		models.EventHelpful: 1, models.EventUsed: 0.8, models.EventIgnored: 0.2, models.EventDismissed: 0, "shrugged": 0,
	} {
		if got := Reward(ev); got != want {
			t.Errorf("Reward(%q) = %v, want %v", ev, got, want)
		}
	}
}

func TestTurnReward(t *testing.T) {
	const (
		H = models.EventHelpful
		U = models.EventUsed
		I = models.EventIgnored
		D = models.EventDismissed
	)
	for _, c := range []struct {
		name     string
		events   []models.EventType
		surfaced int
		want     float64
	}{
		{"nothing surfaced", nil, 0, 0.4},
		{"one helpful", []models.EventType{H}, 1, 1},
		{"used and dismissed", []models.EventType{U, D}, 2, 0.4},
		{"used and ignored: beats silence", []models.EventType{U, I}, 2, 0.5},
		{"two used, one ignored", []models.EventType{U, U, I}, 3, 0.6},
		{"missing outcomes count as ignored", []models.EventType{H}, 3, (1 + 0.2 + 0.2) / 3},
		{"no outcome yet", nil, 2, 0.2},
		{"more events than surfaced", []models.EventType{U, H}, 1, 0.9},
	} {
		near(t, c.name, TurnReward(c.events, c.surfaced), c.want)
	}
}
