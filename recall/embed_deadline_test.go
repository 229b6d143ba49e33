package recall_test

import (
	"context"
	"testing"
	"time"

	"github.com/salience-ai/salience/embed"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/recall"
)

// deadlineEmbedder records how long each call was given before its context's deadline.
type deadlineEmbedder struct {
	embed.Embedder
	left []time.Duration
}

func (d *deadlineEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if dl, ok := ctx.Deadline(); ok {
		d.left = append(d.left, time.Until(dl))
	}
	return d.Embedder.Embed(ctx, texts)
}

// TestEmbedDeadline: the query's embedding gets EmbedBudgetShare of the latency budget,
// half by default.
func TestEmbedDeadline(t *testing.T) {
	st := newEnv(t).store
	const budget = 400 * time.Millisecond
	for _, tc := range []struct {
		share float64 // 0 = the default
		want  time.Duration
	}{{0, 200 * time.Millisecond}, {0.25, 100 * time.Millisecond}} {
		emb := &deadlineEmbedder{Embedder: embed.NewLocal(0)}
		p := recall.New(st, emb, recall.Options{Now: func() time.Time { return t0 }, EmbedBudgetShare: tc.share})
		req := &recall.Request{Namespace: "ns", Mode: models.ModeSearch, Query: "bees", Limit: 5, LatencyBudget: budget}
		if _, err := p.Recall(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		if len(emb.left) != 1 || emb.left[0] > tc.want || emb.left[0] < tc.want-50*time.Millisecond {
			t.Errorf("share %v: embedder given %v, want %v (less the time before the call)", tc.share, emb.left, tc.want)
		}
	}
}
