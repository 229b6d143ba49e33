package decay

import (
	"testing"

	"github.com/salience-ai/salience/models"
)

func TestTriggerMatches(t *testing.T) {
	m := &models.Memory{
		Triggers: []string{"Postgres", "vacuum  FULL", ""},
		Concepts: []string{"postgres", "Index bloat", "autovacuum"},
	}
	for _, c := range []struct {
		name    string
		context []string
		want    int
	}{
		{"none", []string{"kubernetes", "helm"}, 0},
		{"one", []string{"kubernetes", "POSTGRES"}, 1},
		{"normalized, distinct", []string{"postgres", "Postgres!", "vacuum full", "index-bloat"}, 2},
		{"trigger and concept", []string{"autovacuum", "index bloat", "vacuum, full"}, 3},
		{"empty context names never match the empty trigger", []string{"", "  ", "?"}, 0},
		{"nil context", nil, 0},
	} {
		if got := TriggerMatches(m, c.context); got != c.want {
			t.Errorf("%s: TriggerMatches = %d, want %d", c.name, got, c.want)
		}
	}
	if TriggerMatches(nil, []string{"x"}) != 0 {
		t.Error("nil memory matched")
	}
}
