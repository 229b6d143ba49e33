package app

import (
	"fmt"
	"strings"
	"testing"

	"github.com/salience-ai/salience/api"
)

// TestDeleteNamespaceEndToEnd fills two namespaces alike through the running server —
// memories, a recall, engagement (the learned model), settings, an experiment — deletes one
// through the admin route, and checks that nothing of it reads back while the other is
// untouched, and that the name can be used again.
func TestDeleteNamespaceEndToEnd(t *testing.T) {
	s := startServer(t, "")
	for _, ns := range []string{"gone", "kept"} {
		s.must("POST", "/v1/namespaces/"+ns+"/memories", `{"memories":[
			{"kind":"fact","content":"Nadia keeps her bees on the roof of the old cannery."},
			{"kind":"fact","content":"The cannery roof was repaired in March after the storm."}]}`, "", 201, nil)
		var rec api.RecallResponse
		s.must("POST", "/v1/namespaces/"+ns+"/recall", `{"mode":"search","conversation_id":"c1","query":"cannery roof","limit":2}`, "", 200, &rec)
		if len(rec.Results) != 2 {
			t.Fatalf("%s: recall found %d results, want 2", ns, len(rec.Results))
		}
		s.must("POST", "/v1/namespaces/"+ns+"/engagement", fmt.Sprintf(`{"events":[{"id":"e1","surfacing_id":%q,"type":"used"}]}`,
			rec.Results[0].SurfacingID), "", 200, nil)
		s.must("PATCH", "/v1/namespaces/"+ns+"/settings", `{"freshness_half_life_hours":72}`, "", 200, nil)
		s.must("POST", "/v1/namespaces/"+ns+"/experiments", `{"name":"fresher","variants":[{"name":"control","share":0.5},
			{"name":"fresh","share":0.5,"overrides":{"freshness_half_life_hours":48}}]}`, "", 201, nil)
	}

	if status, body := s.do("DELETE", "/v1/admin/namespaces/bad%20ns", "", ""); status != 400 {
		t.Errorf("deleting an invalid namespace: %d %s, want 400", status, body)
	}
	var d api.NamespaceDeletedResponse
	s.must("DELETE", "/v1/admin/namespaces/gone", "", "", 200, &d)
	// Two memories, and at least: their two surfacings, the event, the conversation, the
	// experiment, the namespace, the model and the settings with their audit trail.
	if d.Namespace != "gone" || d.Memories != 2 || d.Records < 11 {
		t.Errorf("delete = %+v, want 2 memories and 11 or more records", d)
	}
	// Again: nothing left.
	s.must("DELETE", "/v1/admin/namespaces/gone", "", "", 200, &d)
	if d != (api.NamespaceDeletedResponse{Namespace: "gone"}) {
		t.Errorf("second delete = %+v, want nothing deleted", d)
	}

	var list api.ListMemoriesResponse
	s.must("GET", "/v1/namespaces/gone/memories", "", "", 200, &list)
	var rec api.RecallResponse
	s.must("POST", "/v1/namespaces/gone/recall", `{"mode":"search","conversation_id":"c1","query":"cannery roof"}`, "", 200, &rec)
	var set struct {
		Version int64 `json:"version"`
	}
	s.must("GET", "/v1/namespaces/gone/settings", "", "", 200, &set)
	var exps api.ExperimentList
	s.must("GET", "/v1/namespaces/gone/experiments", "", "", 200, &exps)
	var m api.MetricsResponse
	s.must("GET", "/v1/namespaces/gone/metrics", "", "", 200, &m)
	if len(list.Memories) != 0 || len(rec.Results) != 0 || set.Version != 0 || len(exps.Experiments) != 0 || m.Events.Total != 0 {
		t.Errorf("after the delete: %d memories, %d recalled, settings version %d, %d experiments, %d events",
			len(list.Memories), len(rec.Results), set.Version, len(exps.Experiments), m.Events.Total)
	}
	var nss api.NamespacesResponse
	s.must("GET", "/v1/admin/namespaces", "", "", 200, &nss)
	if strings.Join(nss.Namespaces, ",") != "kept" {
		t.Errorf("namespaces after the delete = %v, want [kept]", nss.Namespaces)
	}

	// The other namespace keeps everything.
	s.must("GET", "/v1/namespaces/kept/memories", "", "", 200, &list)
	s.must("GET", "/v1/namespaces/kept/settings", "", "", 200, &set)
	s.must("GET", "/v1/namespaces/kept/experiments", "", "", 200, &exps)
	s.must("GET", "/v1/namespaces/kept/metrics", "", "", 200, &m)
	if len(list.Memories) != 2 || set.Version != 1 || len(exps.Experiments) != 1 || m.Events.Total != 1 {
		t.Errorf("the other namespace: %d memories, settings version %d, %d experiments, %d events; want 2, 1, 1, 1",
			len(list.Memories), set.Version, len(exps.Experiments), m.Events.Total)
	}

	// The name is free for a new namespace.
	s.must("POST", "/v1/namespaces/gone/memories", `{"memories":[{"kind":"fact","content":"A new start on the cannery roof."}]}`, "", 201, nil)
	s.must("POST", "/v1/namespaces/gone/recall", `{"mode":"search","conversation_id":"c9","query":"cannery roof"}`, "", 200, &rec)
	if len(rec.Results) != 1 || !strings.Contains(rec.Results[0].Content, "new start") {
		t.Errorf("recall in the recreated namespace = %+v", rec.Results)
	}
}
