package models

import (
	"math"
	"testing"
	"time"
)

// TestValidateStoredEdge: the edge checks both stores share, each failure naming its field.
func TestValidateStoredEdge(t *testing.T) {
	ok := Edge{From: "m1", To: "c:x", Type: EdgeMentions, Weight: 0.3}
	with := func(f func(*Edge)) *Edge { e := ok; f(&e); return &e }
	for _, tc := range []struct {
		name  string
		e     *Edge
		field string // "" = valid
	}{
		{"valid", &ok, ""},
		{"missing", nil, "edge"},
		{"other namespace", with(func(e *Edge) { e.Namespace = "other" }), "edge.namespace"},
		{"no end", with(func(e *Edge) { e.To = "" }), "edge"},
		{"no type", with(func(e *Edge) { e.Type = "" }), "edge.type"},
		{"weight above 1", with(func(e *Edge) { e.Weight = 1.5 }), "edge.weight"},
		{"NaN weight", with(func(e *Edge) { e.Weight = math.NaN() }), "edge.weight"},
		{"negative co-occurrences", with(func(e *Edge) { e.CoOccurrences = -1 }), "edge.co_occurrences"},
		{"control character", with(func(e *Edge) { e.Fact = "a\nb" }), "edge"},
		{"time out of range", with(func(e *Edge) { e.LastDecayed = time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC) }), "edge.last_decayed"},
	} {
		got, err := ValidateStoredEdge(tc.e, "ns", "edge")
		if tc.field == "" {
			if err != nil || got.Namespace != "ns" || got == tc.e {
				t.Errorf("%s: %+v, %v; want a copy in namespace ns", tc.name, got, err)
			}
			continue
		}
		if ErrorCode(err) != EINVALID || ErrorField(err) != tc.field {
			t.Errorf("%s: error %v (field %q), want EINVALID on %q", tc.name, err, ErrorField(err), tc.field)
		}
	}
}
