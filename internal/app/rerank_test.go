package app

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/rerank/rerankfake"
)

func startFake(t *testing.T) string {
	t.Helper()
	url, stop, err := rerankfake.Start(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return url
}

const rerankCorpus = `{"memories":[
	{"kind":"fact","content":"The weather was cold on the lake in May."},
	{"kind":"fact","content":"Nadia keeps her bees on the roof of the old cannery, near the lake."},
	{"kind":"fact","content":"Nadia's bee allergy diagnosis came back.","sensitive":true}]}`

func TestServeReranksThroughTheEndpoint(t *testing.T) {
	s := startServer(t, "", "--rerank", "on", "--rerank-url", startFake(t))
	s.ingest("r", rerankCorpus, "")
	resp := s.recall("r", api.RecallRequest{Mode: "search", Query: "where does Nadia keep her bees on the lake"}, "")
	if resp.Rerank.Status != "applied" {
		t.Fatalf("rerank %+v, want applied", resp.Rerank)
	}
	off := s.recall("r", api.RecallRequest{Mode: "search", Query: "where does Nadia keep her bees on the lake", Rerank: "off"}, "")
	if off.Rerank.Status != "off" || off.Rerank.Reason != "rerank off in request" {
		t.Errorf("rerank off: %+v", off.Rerank)
	}
	res, err := http.Get(s.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	for _, want := range []string{`salience_rerank_total{status="applied"} 1`, `salience_rerank_latency_seconds_count{status="applied"} 1`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

func TestServeRerankPolicy(t *testing.T) {
	// A key alone configures the reranker but turns nothing on.
	s := startServer(t, "", "--rerank-url", startFake(t))
	s.ingest("quiet", rerankCorpus, "")
	s.ingest("loud", rerankCorpus, "")
	q := api.RecallRequest{Mode: "search", Query: "Nadia bees lake"}
	if got := s.recall("quiet", q, "").Rerank; got.Status != "off" || !strings.Contains(got.Reason, "off by default") {
		t.Errorf("default off: %+v", got)
	}
	// A namespace's settings turn it on for that namespace only.
	if err := s.m.store.SetState(context.Background(), "settings/loud", `{"rerank":"on"}`); err != nil {
		t.Fatal(err)
	}
	if got := s.recall("loud", q, "").Rerank; got.Status != "applied" {
		t.Errorf("settings on: %+v", got)
	}
	if got := s.recall("quiet", q, "").Rerank; got.Status != "off" {
		t.Errorf("other namespace: %+v", got)
	}

	// No endpoint at all: unconfigured.
	plain := startServer(t, "")
	plain.ingest("n", rerankCorpus, "")
	if got := plain.recall("n", q, "").Rerank; got != (api.RerankStatus{Status: "unconfigured", Reason: "no reranker configured"}) {
		t.Errorf("unconfigured: %+v", got)
	}
}

func TestRerankConfig(t *testing.T) {
	env := map[string]string{"ANTHROPIC_API_KEY": "sk-ant-env"}
	m, err := parse(t, env, "--rerank", "on")
	if err != nil {
		t.Fatal(err)
	}
	if r := m.Config.Rerank; r.Key != "sk-ant-env" || r.Model != "claude-haiku-4-5" || r.TopN != 20 || r.URL != "" || r.Policy != "on" {
		t.Errorf("rerank config %+v", r)
	}
	env["SALIENCE_RERANK_KEY"] = "sk-salience"
	if m, _ := parse(t, env); m.Config.Rerank.Key != "sk-salience" || m.Config.Rerank.Policy != "off" {
		t.Errorf("SALIENCE_RERANK_KEY: %+v", m.Config.Rerank)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--rerank", "yes"}, `--rerank "yes": want on or off`},
		{[]string{"--rerank", "on"}, "needs a key"},
		{[]string{"--rerank-top-n", "1"}, "--rerank-top-n must be between 2 and 100"},
		{[]string{"--rerank-model", ""}, "--rerank-model must not be empty"},
	} {
		if _, err := parse(t, nil, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
	// A local endpoint needs no key.
	if _, err := parse(t, nil, "--rerank", "on", "--rerank-url", "http://127.0.0.1:11434/v1"); err != nil {
		t.Errorf("local endpoint without key: %v", err)
	}
}

// A reranker that never answers costs a recall its budget, not more, and the order is the
// pipeline's own.
func TestServeRerankTimeoutKeepsOrder(t *testing.T) {
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // read it all, so the server notices the client leave
		<-r.Context().Done()
	}))
	defer hang.Close()
	s := startServer(t, "", "--rerank", "on", "--rerank-url", hang.URL+"/v1")
	s.ingest("r", rerankCorpus, "")
	q := api.RecallRequest{Mode: "search", Query: "Nadia bees lake", LatencyBudgetMS: 80}
	got := s.recall("r", q, "")
	if got.Rerank.Status != "timeout" || !strings.HasPrefix(got.Rerank.Reason, "no answer within the ") {
		t.Fatalf("rerank %+v, want timeout", got.Rerank)
	}
	q.Rerank = "off"
	want := s.recall("r", q, "")
	if g, w := resultIDs(got.Results), resultIDs(want.Results); len(g) < 2 || !slices.Equal(g, w) {
		t.Errorf("order after a timeout %v, want the un-reranked %v", g, w)
	}
}
