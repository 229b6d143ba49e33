package recall_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/salience-ai/salience/embed"
	"github.com/salience-ai/salience/ingest"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/recall"
	"github.com/salience-ai/salience/rerank"
	"github.com/salience-ai/salience/store/sqlite"
)

// fakeReranker answers with a fixed outcome and keeps what it was asked; reverse makes it
// apply the reverse of the order it is given.
type fakeReranker struct {
	out     rerank.Outcome
	reverse bool
	got     []*rerank.Request
}

func (f *fakeReranker) Rerank(_ context.Context, req *rerank.Request) rerank.Outcome {
	f.got = append(f.got, req)
	out := f.out
	if f.reverse {
		out.Order = make([]int, len(req.Candidates))
		for i := range out.Order {
			out.Order[i] = len(req.Candidates) - 1 - i
		}
	}
	return out
}

// rerankEnv is a store holding a small corpus, with a pipeline without reranker over it
// and a constructor of pipelines with one.
func rerankEnv(t *testing.T) (plain *recall.Pipeline, with func(recall.Reranker) *recall.Pipeline) {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "s.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	emb := embed.NewLocal(0)
	now := func() time.Time { return t0 }
	ms := []*models.Memory{
		mem(models.KindFact, "Nadia keeps her bees on the roof of the old cannery.", t0.Add(-time.Hour)),
		mem(models.KindFact, "The bees swarmed in May and Nadia caught them.", t0.Add(-2*time.Hour)),
		mem(models.KindFact, "Bees need water near the hive in summer.", t0.Add(-3*time.Hour)),
		{Kind: models.KindFact, Content: "Nadia's bee allergy diagnosis is private.", CreatedAt: t0.Add(-4 * time.Hour), Sensitive: true},
	}
	if _, err := ingest.New(st, emb, ingest.Options{Now: now}).Ingest(context.Background(), "ns", ms); err != nil {
		t.Fatal(err)
	}
	with = func(rr recall.Reranker) *recall.Pipeline {
		return recall.New(st, emb, recall.Options{Now: now, Reranker: rr})
	}
	return with(nil), with
}

func resultIDs(rs []recall.Result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Memory.ID
	}
	return out
}

func search(limit int, mode string) *recall.Request {
	return &recall.Request{Namespace: "ns", Mode: models.ModeSearch, Query: "Nadia bees", Limit: limit,
		LatencyBudget: 250 * time.Millisecond, Rerank: mode}
}

func TestRerankUnconfiguredAndOff(t *testing.T) {
	p, with := rerankEnv(t)
	fr := &fakeReranker{out: rerank.Outcome{Status: rerank.StatusApplied}, reverse: true}
	for _, tc := range []struct {
		p      *recall.Pipeline
		mode   string
		status recall.RerankStatus
	}{
		{p, "", recall.RerankStatus{Status: "unconfigured", Reason: "no reranker configured"}},
		{p, "on", recall.RerankStatus{Status: "unconfigured", Reason: "no reranker configured"}},
		{p, "off", recall.RerankStatus{Status: "off", Reason: "rerank off in request"}},
		{with(fr), "off", recall.RerankStatus{Status: "off", Reason: "rerank off in request"}},
	} {
		resp, err := tc.p.Recall(context.Background(), search(10, tc.mode))
		if err != nil {
			t.Fatal(err)
		}
		if resp.Rerank != tc.status {
			t.Errorf("rerank %q: status %+v, want %+v", tc.mode, resp.Rerank, tc.status)
		}
	}
	if len(fr.got) != 0 {
		t.Errorf("the reranker was asked %d times with rerank off", len(fr.got))
	}
}

func TestRerankAppliedBeforeTheCut(t *testing.T) {
	plain, with := rerankEnv(t)
	base, err := plain.Recall(context.Background(), search(10, ""))
	if err != nil {
		t.Fatal(err)
	}
	order := resultIDs(base.Results)
	if len(order) < 3 {
		t.Fatalf("only %d results to rerank", len(order))
	}

	fr := &fakeReranker{out: rerank.Outcome{Status: rerank.StatusApplied}, reverse: true}
	p := with(fr)
	resp, err := p.Recall(context.Background(), search(10, ""))
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(order)
	slices.Reverse(want)
	if got := resultIDs(resp.Results); !slices.Equal(got, want) {
		t.Errorf("reranked %v, want the reverse of %v", got, order)
	}
	if resp.Rerank != (recall.RerankStatus{Status: "applied"}) {
		t.Errorf("status %+v, want applied", resp.Rerank)
	}
	got := fr.got[0]
	if got.Namespace != "ns" || got.Query != "Nadia bees" || got.Mode != "auto" || got.Budget != 250*time.Millisecond || got.Elapsed <= 0 {
		t.Errorf("request %+v", got)
	}
	var sensitive []string
	for i, c := range got.Candidates {
		if c.ID != order[i] || c.Text != base.Results[i].Content {
			t.Errorf("candidate %d = %q %q, want %q %q", i, c.ID, c.Text, order[i], base.Results[i].Content)
		}
		if c.Sensitive {
			sensitive = append(sensitive, c.Text)
		}
	}
	if len(sensitive) != 1 || sensitive[0] != "Nadia's bee allergy diagnosis is private." {
		t.Errorf("sensitive candidates %q, want the allergy one marked", sensitive)
	}

	// Reranking comes before the limit: with limit 1 the one result is the model's first.
	resp, err = p.Recall(context.Background(), search(1, ""))
	if err != nil {
		t.Fatal(err)
	}
	if got := resultIDs(resp.Results); len(got) != 1 || got[0] != order[len(order)-1] {
		t.Errorf("limit 1 after reranking: %v, want [%s]", got, order[len(order)-1])
	}
}

func TestRerankFailureKeepsOrder(t *testing.T) {
	plain, with := rerankEnv(t)
	base, err := plain.Recall(context.Background(), search(10, ""))
	if err != nil {
		t.Fatal(err)
	}
	for _, status := range []string{rerank.StatusTimeout, rerank.StatusError, rerank.StatusCircuitOpen, rerank.StatusSkippedBudget} {
		// An order that is not applied must be ignored even when one comes back.
		fr := &fakeReranker{out: rerank.Outcome{Status: status, Reason: "because"}, reverse: true}
		resp, err := with(fr).Recall(context.Background(), search(10, "on"))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := resultIDs(resp.Results), resultIDs(base.Results); !slices.Equal(got, want) {
			t.Errorf("%s: order %v, want the original %v", status, got, want)
		}
		if resp.Rerank != (recall.RerankStatus{Status: status, Reason: "because"}) {
			t.Errorf("%s: status %+v", status, resp.Rerank)
		}
		if fr.got[0].Mode != "on" {
			t.Errorf("mode %q, want on", fr.got[0].Mode)
		}
	}
}
