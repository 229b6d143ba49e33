package server

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/salience-ai/salience/api"
)

// TestUnparseableAtRejectsOnlyThatEvent: an `at` that is not a time rejects its event alone,
// with the other events of the batch applied, as an `at` in the future does (issue 8).
func TestUnparseableAtRejectsOnlyThatEvent(t *testing.T) {
	s, _ := engagementStack(t)
	h := s.Handler()
	res, body := do(t, h, "POST", "/v1/namespaces/a/engagement", `{"events":[
		{"id":"e1","surfacing_id":"s1","type":"used","at":"yesterday"},
		{"id":"e2","surfacing_id":"s2","type":"used","at":"2026-03-01T11:59:30Z"},
		{"id":"e3","surfacing_id":"s1","type":"used","at":12},
		{"id":"e4","surfacing_id":"s1","type":"used","at":null}]}`, "Authorization", keyA)
	if res.StatusCode != 200 {
		t.Fatalf("status %d: %s", res.StatusCode, body)
	}
	var got api.EngagementResponse
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	want := api.EngagementResponse{Applied: 2, Rejected: 2, Results: []api.EngagementResult{
		{ID: "e1", Status: "rejected", Error: &api.Error{Code: "invalid", Field: "events[0].at",
			Message: `events[0].at must be an RFC 3339 time such as "2024-05-01T14:30:00Z", not the string "yesterday"`}},
		{ID: "e2", Status: "applied"},
		{ID: "e3", Status: "rejected", Error: &api.Error{Code: "invalid", Field: "events[2].at",
			Message: `events[2].at must be an RFC 3339 time such as "2024-05-01T14:30:00Z", not the number 12`}},
		// null is an absent time: now.
		{ID: "e4", Status: "applied"},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("response %s\nwant %+v", body, want)
	}
}
