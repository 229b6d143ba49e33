package rerankfake

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/salience-ai/salience/rerank"
)

func TestRank(t *testing.T) {
	prompt := "Turn:\nWhere does Nadia keep her bees?\n\nCandidates:\n[m1] The tax report is due.\n[m2] Nadia keeps bees on the roof.\n[m3] Her bees make honey.\n"
	if got, want := Rank(prompt), []string{"m2", "m3", "m1"}; !slices.Equal(got, want) {
		t.Errorf("Rank = %v, want %v", got, want)
	}
}

// The fake speaks the reranker's protocol end to end.
func TestFakeThroughReranker(t *testing.T) {
	url, stop, err := Start(0)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	r, err := rerank.New(rerank.Options{BaseURL: url, Default: rerank.PolicyOn})
	if err != nil {
		t.Fatal(err)
	}
	out := r.Rerank(context.Background(), &rerank.Request{
		Namespace: "ns", Query: "bees on the roof", Budget: 5 * time.Second,
		Candidates: []rerank.Candidate{{ID: "a", Text: "taxes"}, {ID: "b", Text: "the bees live on the roof"}},
	})
	if out.Status != rerank.StatusApplied || !slices.Equal(out.Order, []int{1, 0}) {
		t.Errorf("outcome %+v, want applied [1 0]", out)
	}
}
