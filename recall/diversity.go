package recall

import (
	"context"
	"sort"

	"github.com/salience-ai/salience/models"
)

// diversify reorders a ranked list by maximal marginal relevance (λ·score − (1−λ)·max
// similarity to what is already chosen, on embeddings), and lets at most one fact per
// unordered (subject, object) pair through before the overflow backfills (docs/design.md#diversity).
// Only the first n positions are chosen this way; the rest keep their order.
func diversify(list []*candidate, lambda float64, n int) []*candidate {
	if len(list) <= 1 {
		return list
	}
	pool := append([]*candidate(nil), list...)
	chosen := make([]*candidate, 0, len(list))
	var overflow []*candidate
	pairs := map[[2]string]bool{}
	for len(pool) > 0 && len(chosen) < n {
		best, bestVal := -1, 0.0
		for i, c := range pool {
			maxSim := 0.0
			for _, s := range chosen {
				if sim := cosine(vec(c), vec(s)); sim > maxSim {
					maxSim = sim
				}
			}
			v := lambda*c.score - (1-lambda)*maxSim
			if best < 0 || v > bestVal {
				best, bestVal = i, v
			}
		}
		c := pool[best]
		pool = append(pool[:best], pool[best+1:]...)
		if key, ok := factPair(c.mem); ok {
			if pairs[key] {
				overflow = append(overflow, c)
				continue
			}
			pairs[key] = true
		}
		chosen = append(chosen, c)
	}
	sort.SliceStable(overflow, func(i, j int) bool { return overflow[i].score > overflow[j].score })
	chosen = append(chosen, overflow...)
	return append(chosen, pool...)
}

// vec is the embedding of the candidate's best unit (withVectors).
func vec(c *candidate) []float32 { return c.vec }

// withVectors sets the vector diversify compares of each candidate: its best unit's, or,
// without one, its memory's. Ranking reads memories without their vectors (hydrate), so
// they are fetched here for the few candidates that got this far.
func (p *Pipeline) withVectors(ctx context.Context, req *Request, list []*candidate) error {
	if len(list) <= 1 {
		return nil // diversify compares nothing
	}
	byNS := map[string][]*candidate{}
	var order []string
	for _, c := range list {
		ns := c.mem.Namespace
		if ns == "" {
			ns = req.Namespace
		}
		if _, ok := byNS[ns]; !ok {
			order = append(order, ns)
		}
		byNS[ns] = append(byNS[ns], c)
	}
	for _, ns := range order {
		cs := byNS[ns]
		want := make([]string, len(cs))
		for i, c := range cs {
			want[i] = vecOf(c).ID
		}
		ms, err := p.store.ViewMemories(ctx, ns, want, true)
		if err != nil {
			return err
		}
		// ms is in the order of want, missing ids skipped.
		for i, id := range want {
			if len(ms) > 0 && ms[0].ID == id {
				cs[i].vec, ms = ms[0].Embedding, ms[1:]
			}
		}
	}
	return nil
}

// vecOf is the memory whose embedding stands for c: its best unit, or its memory.
func vecOf(c *candidate) *models.Memory {
	if c.unitMem != nil {
		return c.unitMem
	}
	return c.mem
}

func factPair(m *models.Memory) ([2]string, bool) {
	if m.Kind != models.KindFact || m.Triple == nil {
		return [2]string{}, false
	}
	a, b := models.NormalizeConcept(m.Triple.Subject), models.NormalizeConcept(m.Triple.Object)
	if a > b {
		a, b = b, a
	}
	return [2]string{a, b}, true
}

// cosine of two L2-normalized vectors (their dot product); 0 when either is missing.
func cosine(a, b []float32) float64 {
	if len(a) == 0 || len(a) != len(b) {
		return 0
	}
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return float64(s)
}
