package sqlite

import (
	"encoding/json"
	"testing"

	"github.com/salience-ai/salience/models"
)

// jsonConfidence must read back exactly what encoding/json wrote, whatever the value.
func TestJSONConfidence(t *testing.T) {
	for _, c := range []float64{0, 1, 0.6, 0.1 + 0.2, 1.0 / 3, 5e-324, 1e-7} {
		b, err := json.Marshal(models.Components{Relevance: 0.9, Confidence: c, Freshness: 0.25, Novelty: 1})
		if err != nil {
			t.Fatal(err)
		}
		got, err := jsonConfidence(string(b))
		if err != nil || got != c {
			t.Errorf("jsonConfidence(%s) = %v, %v; want %v", b, got, err, c)
		}
	}
	if got, err := jsonConfidence(""); got != 0 || err != nil {
		t.Errorf(`jsonConfidence("") = %v, %v; want 0, nil`, got, err)
	}
	if _, err := jsonConfidence(`{"confidence":x}`); err == nil {
		t.Error("a malformed confidence decoded without an error")
	}
}
