package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/salience-ai/salience/api"
)

// TestEngagementLoopEndToEnd runs the learning loop through the real binary's Main: ingest,
// recall, engagement over HTTP; then the metrics route and `salience metrics` report the
// same figures.
func TestEngagementLoopEndToEnd(t *testing.T) {
	s := startServer(t, "")
	s.must("POST", "/v1/namespaces/loop/memories", `{"memories":[
		{"kind":"fact","content":"Nadia keeps her bees on the roof of the old cannery."},
		{"kind":"fact","content":"The cannery roof was repaired in March after the storm."},
		{"kind":"fact","content":"Tomas repairs bicycles in the shed behind the bakery."}]}`, "", 201, nil)
	var rec api.RecallResponse
	s.must("POST", "/v1/namespaces/loop/recall", `{"mode":"search","conversation_id":"c1","query":"cannery roof","limit":2}`, "", 200, &rec)
	if len(rec.Results) != 2 {
		t.Fatalf("recall found %d results, want the two cannery memories", len(rec.Results))
	}
	first, second := rec.Results[0].SurfacingID, rec.Results[1].SurfacingID
	var res api.EngagementResponse
	s.must("POST", "/v1/namespaces/loop/engagement", fmt.Sprintf(`{"events":[
		{"id":"e1","surfacing_id":%q,"type":"used"},
		{"id":"e2","surfacing_id":%q,"type":"dismissed"},
		{"id":"e3","surfacing_id":"unknown","type":"used"}]}`, first, second), "", 200, &res)
	if res.Applied != 2 || res.Rejected != 1 || res.Results[2].Error.Field != "events[2].surfacing_id" {
		t.Fatalf("engagement = %+v", res)
	}
	var m api.MetricsResponse
	s.must("GET", "/v1/namespaces/loop/metrics", "", "", 200, &m)
	// Two surfacings, one used and one dismissed: precision and dismissal rate 1/2.
	if m.Overall != (api.OutcomeCounts{Surfaced: 2, Used: 1, Dismissed: 1, Precision: 0.5, DismissalRate: 0.5}) ||
		m.Events.Total != 2 || m.Turns != 1 || m.Latency.Calls != 1 || m.Latency.P95MS <= 0 {
		t.Errorf("metrics = %+v", m)
	}

	// The CLI reads the same database (the server may keep running: SQLite in WAL mode).
	var out, errOut bytes.Buffer
	cli := NewMain()
	cli.Stdout, cli.Stderr = &out, &errOut
	if err := cli.ParseFlags(context.Background(), []string{"metrics", "--data", s.dir, "--ns", "loop", "--json"}); err != nil {
		t.Fatal(err)
	}
	if err := cli.Run(context.Background()); err != nil {
		t.Fatalf("metrics --json: %v\n%s", err, errOut.String())
	}
	var fromCLI api.MetricsResponse
	if err := json.Unmarshal(out.Bytes(), &fromCLI); err != nil {
		t.Fatalf("metrics --json printed %q: %v", out.String(), err)
	}
	// Louvain's modularity may differ in the last bits between runs (graph.Health sums
	// weights in map order); everything else must be identical.
	if d := fromCLI.Graph.Modularity - m.Graph.Modularity; d < 1e-12 && d > -1e-12 {
		fromCLI.Graph.Modularity = m.Graph.Modularity
	}
	if !reflect.DeepEqual(fromCLI, m) {
		t.Errorf("CLI report %+v\nroute report %+v", fromCLI, m)
	}

	out.Reset()
	cli = NewMain()
	cli.Stdout, cli.Stderr = &out, &errOut
	if err := cli.ParseFlags(context.Background(), []string{"metrics", "--data", s.dir, "--ns", "loop"}); err != nil {
		t.Fatal(err)
	}
	if err := cli.Run(context.Background()); err != nil {
		t.Fatalf("metrics: %v", err)
	}
	overall := ""
	for _, line := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "overall" {
			overall = strings.Join(f, " ")
		}
	}
	if want := "overall 2 1 0 0 1 0 0.500 0.500 0.000"; overall != want {
		t.Errorf("overall row %q, want %q", overall, want)
	}
	for _, want := range []string{
		"namespace loop, all time: 1 conversations, 1 turns",
		"events: 2 (used 1, helpful 0, ignored 0, dismissed 1; 0 implicit)",
		"proactive recall: 0.000 (0 of 1 used search results had been volunteered earlier)",
		"p_use calibration: Brier",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}

	// relearn rebuilds the model the two events trained, while the server runs.
	out.Reset()
	cli = NewMain()
	cli.Stdout, cli.Stderr = &out, &errOut
	if err := cli.ParseFlags(context.Background(), []string{"relearn", "--data", s.dir, "--ns", "loop"}); err != nil {
		t.Fatal(err)
	}
	if err := cli.Run(context.Background()); err != nil {
		t.Fatalf("relearn: %v\n%s", err, errOut.String())
	}
	if want := "namespace loop: relevance model rebuilt from 2 events (0 without their surfacing), version 2; largest weight difference from the online model 0\n"; out.String() != want {
		t.Errorf("relearn printed %q, want %q", out.String(), want)
	}
	// The same through the running server's admin route.
	var rr api.RelearnResponse
	s.must("POST", "/v1/admin/namespaces/loop/relearn", "", "", 200, &rr)
	if rr != (api.RelearnResponse{Namespace: "loop", Events: 2, Version: 2}) {
		t.Errorf("relearn route = %+v", rr)
	}
	s.must("POST", "/v1/admin/namespaces/loop/relearn?from_kept=true", "", "", 200, &rr)
	if rr != (api.RelearnResponse{Namespace: "loop", Events: 2, Version: 2}) {
		t.Errorf("relearn route from the kept events of an unpruned log = %+v", rr)
	}
	if status, body := s.do("POST", "/v1/admin/namespaces/loop/relearn?from_kept=maybe", "", ""); status != 400 || !strings.Contains(string(body), "from_kept") {
		t.Errorf("from_kept=maybe: %d %s, want 400 naming from_kept", status, body)
	}
}

func TestMetricsCommandErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"metrics", "--data", dir}, "--ns is required"},
		{[]string{"metrics", "--data", dir, "--ns", "a"}, "no database at"},
		{[]string{"metrics", "--data", dir, "--ns", "a", "--since", "monday"}, "--since must be an RFC 3339 time"},
		{[]string{"metrics", "--ns", "a", "extra"}, "unexpected arguments"},
	} {
		var out, errOut bytes.Buffer
		m := NewMain()
		m.Stdout, m.Stderr = &out, &errOut
		err := m.ParseFlags(context.Background(), c.args)
		if err == nil {
			err = m.Run(context.Background())
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want one saying %q", c.args, err, c.want)
		}
	}
}
