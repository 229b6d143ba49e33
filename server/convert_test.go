package server

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/recall"
)

// TestComponentsCoverTheModel fails when models.Components gains a field that the wire type
// or componentsToAPI does not carry: every component must reach a caller who asks to explain.
func TestComponentsCoverTheModel(t *testing.T) {
	var c models.Components
	v := reflect.ValueOf(&c).Elem()
	for i := range v.NumField() {
		switch f := v.Field(i); f.Kind() {
		case reflect.Float64:
			f.SetFloat(float64(i+1) / 100) // a distinct non-zero value per field
		case reflect.Int:
			f.SetInt(int64(i + 1)) // Features, the feature set's version
		default:
			t.Fatalf("components field %s is a %s: give it a distinct value here", v.Type().Field(i).Name, f.Kind())
		}
	}
	var want map[string]float64
	b, _ := json.Marshal(c)
	json.Unmarshal(b, &want)
	var got map[string]float64
	b, _ = json.Marshal(componentsToAPI(&c))
	json.Unmarshal(b, &got)
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if g, ok := got[k]; !ok || g != want[k] {
			t.Errorf("component %s: wire %v (present %v), want %v", k, g, ok, want[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			t.Errorf("wire component %s is no field of models.Components", k)
		}
	}
}

func TestRecallResponseToAPI(t *testing.T) {
	at := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	m := &models.Memory{ID: "01P", Kind: models.KindDocument, CreatedAt: at, ValidAt: at.Add(-time.Hour), Source: models.Source{Speaker: "ada"}}
	resp := recallResponseToAPI(&recall.Response{
		Results: []recall.Result{{
			Memory: m, Content: "chunk two", Fragment: &recall.Fragment{ParentID: "01P", Index: 2, Count: 3},
			SurfacingID: "01S", Score: 0.8, Components: &models.Components{Relevance: 0.9}, Reasons: []string{"text"}, Volunteered: true,
		}},
		Context: "ctx", TurnID: "t1", ConversationType: "casual", Threshold: 0.9, Variant: "b",
		Rerank: recall.RerankStatus{Status: "skipped_budget", Reason: "budget"}, Degraded: []string{"embedder: timeout"},
		LatencyMS: 1.5, Stages: map[string]float64{"search": 0.5}, Startup: &recall.Startup{Now: at, Memories: 3},
	})
	r := resp.Results[0]
	if r.ID != "01P" || r.Kind != "document" || r.Content != "chunk two" || r.Fragment.Index != 2 || r.Fragment.Count != 3 ||
		r.SurfacingID != "01S" || r.Score != 0.8 || r.Components.Relevance != 0.9 || !r.Volunteered || r.Reasons[0] != "text" ||
		!r.CreatedAt.Equal(at) || !r.ValidAt.Equal(at.Add(-time.Hour)) || r.Source.Speaker != "ada" {
		t.Errorf("result %+v", r)
	}
	if resp.Context != "ctx" || resp.TurnID != "t1" || resp.ConversationType != "casual" || resp.Threshold != 0.9 || resp.Variant != "b" ||
		resp.Rerank.Status != "skipped_budget" || resp.Rerank.Reason != "budget" || resp.Degraded[0] != "embedder: timeout" ||
		resp.LatencyMS != 1.5 || resp.Stages["search"] != 0.5 || resp.Startup.Memories != 3 {
		t.Errorf("response %+v", resp)
	}
	// No results is an empty list on the wire, not null.
	b, _ := json.Marshal(recallResponseToAPI(&recall.Response{}))
	var raw map[string]json.RawMessage
	json.Unmarshal(b, &raw)
	if string(raw["results"]) != "[]" {
		t.Errorf("results = %s, want []", raw["results"])
	}
}
