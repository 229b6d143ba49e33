package recall_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/salience-ai/salience/eval"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/recall"
)

// BenchmarkRecall times the whole pipeline — search, graph, rank and the surfacing write —
// over a synthetic corpus in the embedded store. `salience bench recall` measures the same
// at 100,000 memories with percentiles.
func BenchmarkRecall(b *testing.B) {
	for _, n := range []int{5000} {
		b.Run(fmt.Sprintf("memories=%d", n), func(b *testing.B) {
			e := newEnv(b)
			syn := eval.NewSynth(1)
			for i := 0; i < n; i += 1000 {
				batch := make([]*models.Memory, 0, 1000)
				for j := i; j < i+1000 && j < n; j++ {
					batch = append(batch, syn.Memory(j, t0))
				}
				e.add(b, "bench", batch...)
			}
			qs := make([]string, 256)
			for i := range qs {
				qs[i] = syn.Query()
			}
			for _, mode := range []models.Mode{models.ModeSearch, models.ModeAmbient} {
				b.Run(string(mode), func(b *testing.B) {
					b.ReportAllocs()
					for i := 0; b.Loop(); i++ {
						_, err := e.p.Recall(context.Background(), &recall.Request{
							Namespace: "bench", Mode: mode, Query: qs[i%len(qs)],
							ConversationID: fmt.Sprintf("c%d", i%64),
						})
						if err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}
