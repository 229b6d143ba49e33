package recall

import (
	"fmt"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

func TestWithSettingsOverridesOnlyWhatIsSet(t *testing.T) {
	base := DefaultOptions()
	div := 0.4
	o := base.WithSettings(&models.Settings{
		Weights:                map[models.Mode]models.ScoreWeights{models.ModeSearch: {Importance: 1}},
		FreshnessHalfLifeHours: 48, Diversity: &div, Startup: &models.StartupLimits{Anchors: 9, Facts: 7},
	})
	if got, want := o.Weights[models.ModeSearch], (Weights{Importance: 1}); got != want {
		t.Errorf("search weights %+v, want %+v", got, want)
	}
	if got, want := o.Weights[models.ModeAmbient], DefaultWeights[models.ModeAmbient]; got != want {
		t.Errorf("ambient weights %+v, want the defaults %+v", got, want)
	}
	if DefaultWeights[models.ModeSearch].Relevance != 0.80 {
		t.Errorf("the defaults were written: %+v", DefaultWeights[models.ModeSearch])
	}
	if o.HalfLife != 48*time.Hour {
		t.Errorf("half-life %v, want 48h", o.HalfLife)
	}
	if o.MMRLambda != 0.6 { // diversity 0.4 = MMR lambda 1 − 0.4
		t.Errorf("MMR lambda %v, want 0.6", o.MMRLambda)
	}
	if o.Startup != (StartupCounts{Crystals: 3, Anchors: 9, Summaries: 2, Facts: 7}) {
		t.Errorf("startup %+v, want 3 crystals, 9 anchors, 2 summaries", o.Startup)
	}
	if same := base.WithSettings(&models.Settings{}); same.HalfLife != base.HalfLife || same.MMRLambda != base.MMRLambda {
		t.Errorf("empty settings changed the options")
	}
}

func TestNormalizeSources(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	req := &Request{Namespace: "a", Query: "q", Sources: []string{"a", "shared", "b", "shared"}}
	if err := normalize(req, now); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(req.Sources); got != "[shared b]" {
		t.Errorf("sources %s, want [shared b]", got)
	}
	for _, tc := range []struct {
		req   Request
		field string
	}{
		{Request{Namespace: "a", Query: "q", Sources: []string{"ok", "not ok"}}, "namespaces[1]"},
		{Request{Namespace: "a", Mode: models.ModeStartup, Sources: []string{"shared"}}, "namespaces"},
		{Request{Namespace: "a", Query: "q", Sources: []string{"n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "n9"}}, "namespaces"},
	} {
		if err := normalize(&tc.req, now); models.ErrorField(err) != tc.field {
			t.Errorf("%v: %v, want invalid naming %s", tc.req.Sources, err, tc.field)
		}
	}
}
