package neo4j

import (
	"slices"
	"testing"

	"github.com/salience-ai/salience/models"
)

// TestEachOnce: the groups in order, an edge shared by two groups kept where it first comes.
func TestEachOnce(t *testing.T) {
	ab := &models.Edge{From: "a", To: "b", Type: models.EdgeMentions}
	ac := &models.Edge{From: "a", To: "c", Type: models.EdgeMentions}
	bd := &models.Edge{From: "b", To: "d", Type: models.EdgeMentions}
	got := eachOnce([][]*models.Edge{{ac, ab}, nil, {ab, bd}})
	if want := []*models.Edge{ac, ab, bd}; !slices.Equal(got, want) {
		t.Fatalf("eachOnce = %v, want %v", got, want)
	}
	if got := eachOnce(nil); got != nil {
		t.Fatalf("eachOnce(nil) = %v, want nil", got)
	}
}
