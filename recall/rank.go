package recall

import (
	"context"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/nlp"
)

// rank hydrates the candidates, filters, scores, diversifies and cuts them (DESIGN.md §4.4–4.10).
func (p *Pipeline) rank(ctx context.Context, req *Request, in *intake, cs *candidates, threshold float64) ([]Result, error) {
	if len(cs.byID) == 0 {
		return nil, nil
	}
	if err := p.hydrate(ctx, req.Namespace, cs); err != nil {
		return nil, err
	}
	recent := p.recentlySurfaced(req, in.state)
	var dist map[string]int
	if in.focal != "" {
		var err error
		dist, err = p.focalDistances(ctx, req.Namespace, in.focal)
		if err != nil {
			return nil, err
		}
	}

	w := p.opts.Weights[req.Mode]
	markPhraseCandidates(cs, 3*req.Limit)
	list := make([]*candidate, 0, len(cs.byID))
	for _, c := range cs.byID {
		if c.mem == nil || !p.keep(req, in, c, recent) {
			continue
		}
		c.comps = p.components(req, in, c, dist)
		c.score = weighted(w, c.comps, in.focal != "")
		if !c.direct() && !p.volunteer(req, c, threshold) {
			continue
		}
		list = append(list, c)
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].score != list[j].score {
			return list[i].score > list[j].score
		}
		return list[i].id < list[j].id
	})
	list = dedupe(list)
	if req.Mode == models.ModeAmbient {
		list = diversify(list, p.opts.MMRLambda, req.Limit)
	}
	return p.cut(req, list), nil
}

// volunteer decides on a memory reached only by association or from the resurfacing queue.
// In an explicit search nothing is volunteered: it competes on its score once its
// activation clears AssocFloor. In ambient recall it is volunteered, so it needs
// MinActivation ("multiple semantic paths") unless it was queued and matched, its
// volunteer score — confidence × strength of the association — must clear the
// conversation type's threshold (DESIGN.md §4.9), and it must not be in the cooldown a
// dismissal starts.
func (p *Pipeline) volunteer(req *Request, c *candidate, threshold float64) bool {
	if req.Mode == models.ModeSearch {
		return c.activation >= p.opts.AssocFloor
	}
	if c.mem.Schedule.CooldownTo.After(req.Now) {
		return false // dismissed lately: not volunteered again before its cooldown ends
	}
	if c.resurface == 0 && c.activation < p.opts.MinActivation {
		return false
	}
	strength := math.Min(1, c.activation)
	if c.resurface > 0 {
		strength = math.Max(strength, math.Min(1, float64(c.resurface)/3))
	}
	c.comps.Volunteer = c.mem.Confidence * strength
	return c.comps.Volunteer >= threshold
}

// hydrate loads each candidate's memory and best unit.
func (p *Pipeline) hydrate(ctx context.Context, ns string, cs *candidates) error {
	want := make([]string, 0, 2*len(cs.byID))
	for id, c := range cs.byID {
		if c.mem == nil {
			want = append(want, id)
		}
		if c.unit != "" && c.unit != id {
			want = append(want, c.unit)
		}
	}
	ms, err := p.store.GetMemories(ctx, ns, want)
	if err != nil {
		return err
	}
	byID := make(map[string]*models.Memory, len(ms))
	for _, m := range ms {
		byID[m.ID] = m
	}
	for id, c := range cs.byID {
		if c.mem == nil {
			c.mem = byID[id]
		}
		switch {
		case c.unit != "" && c.unit != id:
			c.unitMem = byID[c.unit]
		case c.mem != nil && c.mem.ChunkCount == 0:
			c.unitMem = c.mem
		}
	}
	return nil
}

// keep applies the filters of DESIGN.md §4.6 and the request's own.
func (p *Pipeline) keep(req *Request, in *intake, c *candidate, recent map[string]bool) bool {
	m := c.mem
	if !req.IncludeInvalid && !m.ValidNow(req.Now) {
		return false
	}
	if m.Sensitive && (req.Mode == models.ModeAmbient || req.Mode == models.ModePredict) {
		return false
	}
	if len(req.Kinds) > 0 && !containsKind(req.Kinds, m.Kind) {
		return false
	}
	t := m.Time()
	if (!req.Since.IsZero() && t.Before(req.Since)) || (!req.Until.IsZero() && !t.Before(req.Until)) {
		return false
	}
	if recent[m.ID] {
		return false
	}
	for _, ctxSet := range m.IrrelevantContexts {
		if jaccard(ctxSet, in.concepts) >= p.opts.IrrelevantJaccard {
			return false
		}
	}
	return true
}

func containsKind(ks []models.Kind, k models.Kind) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

// jaccard is |a∩b| / |a∪b| of two concept sets.
func jaccard(a, b []string) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	set := make(map[string]bool, len(a))
	for _, x := range a {
		set[x] = true
	}
	inter, union := 0, len(set)
	seen := map[string]bool{}
	for _, y := range b {
		if seen[y] {
			continue
		}
		seen[y] = true
		if set[y] {
			inter++
		} else {
			union++
		}
	}
	return float64(inter) / float64(union)
}

// components computes the features of DESIGN.md §4.5, each in 0..1.
func (p *Pipeline) components(req *Request, in *intake, c *candidate, dist map[string]int) models.Components {
	comps := models.Components{
		Confidence: models.Clamp01(c.mem.Confidence),
		Freshness:  p.freshness(c.mem, req.Now),
		Importance: models.Clamp01(c.mem.Importance),
		Novelty:    1 - wallpaper(c.mem, req.Now),
		Activation: math.Min(1, c.activation),
	}
	comps.BM25, comps.Vector = c.bm, c.vecSim
	// Direct relevance and association combine like independent evidence: either alone
	// counts, both count more, and the result stays in 0..1.
	base := c.base
	if len(in.pairs) > 0 && c.unitMem != nil && c.phrase {
		// A query's words next to each other in the text are a phrase match, worth more
		// than the same words scattered ("high-trust bot pairs" vs "bots … pair … trust").
		comps.Phrase = phraseMatch(in.pairs, c.unitMem.Content)
		base = 1 - (1-models.Clamp01(base))*(1-p.opts.PhraseWeight*comps.Phrase)
	}
	comps.Relevance = 1 - (1-models.Clamp01(base))*(1-comps.Activation)
	if len(in.ranges) > 0 && inRanges(c.mem.Time(), in.ranges) {
		// The query named a time and the memory is from then: that is relevance too.
		comps.Relevance = models.Clamp01(comps.Relevance + 0.25)
	}
	if dist != nil {
		if d, ok := dist[c.id]; ok {
			comps.Proximity = 1 / (1 + float64(d))
		}
	}
	return comps
}

func inRanges(t time.Time, rs []nlp.TimeRange) bool {
	for _, r := range rs {
		if !t.Before(r.Start) && t.Before(r.End) {
			return true
		}
	}
	return false
}

// freshness is a true half-life decay, 0.5^(age/half-life): two weeks 50 %, a month 25 %.
// (The source wrote exp(−days/14) while describing these figures; we implement the figures.)
// Age counts from ValidAt or CreatedAt; a memory from the future counts as new.
func (p *Pipeline) freshness(m *models.Memory, now time.Time) float64 {
	t := m.Time()
	if t.IsZero() {
		return 0.5
	}
	age := now.Sub(t)
	if age <= 0 {
		return 1
	}
	return math.Pow(0.5, float64(age)/float64(p.opts.HalfLife))
}

// wallpaper is the penalty for being shown over and over: the surface count, decaying with a
// one-day half-life since the last surfacing, over 5 showings saturates at 1.
func wallpaper(m *models.Memory, now time.Time) float64 {
	if m.SurfaceCount == 0 || m.LastSurfaced.IsZero() {
		return 0
	}
	days := now.Sub(m.LastSurfaced).Hours() / 24
	if days < 0 {
		days = 0
	}
	return math.Min(1, float64(m.SurfaceCount)*math.Pow(0.5, days)/5)
}

func weighted(w Weights, c models.Components, focal bool) float64 {
	sum := w.Relevance*c.Relevance + w.Confidence*c.Confidence + w.Freshness*c.Freshness +
		w.Importance*c.Importance + w.Novelty*c.Novelty
	tot := w.Relevance + w.Confidence + w.Freshness + w.Importance + w.Novelty
	if focal {
		sum += w.Proximity * c.Proximity
		tot += w.Proximity
	}
	if tot == 0 {
		return 0
	}
	return sum / tot
}

// dedupe keeps the first of memories with the same normalized content.
func dedupe(list []*candidate) []*candidate {
	seen := make(map[string]bool, len(list))
	out := list[:0]
	for _, c := range list {
		key := strings.Join(strings.Fields(strings.ToLower(c.mem.Content)), " ")
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, c)
	}
	return out
}

// cut turns the ranked candidates into results under the limit and token budget.
func (p *Pipeline) cut(req *Request, list []*candidate) []Result {
	var out []Result
	used := 0
	for _, c := range list {
		if len(out) >= req.Limit {
			break
		}
		r := Result{Memory: c.mem, Content: c.mem.Content, Score: c.score, Volunteered: !c.direct()}
		if u := c.unitMem; u != nil && u.IsChunk() {
			r.Content = u.Content
			r.Fragment = &Fragment{ParentID: c.mem.ID, Index: u.ChunkIndex + 1, Count: c.mem.ChunkCount}
		}
		if req.TokenBudget > 0 {
			t := nlp.EstimateTokens(r.Content)
			if used+t > req.TokenBudget {
				continue // a shorter one further down may still fit
			}
			used += t
		}
		if c.textRank > 0 {
			r.Reasons = append(r.Reasons, "text")
		}
		if c.vecRank > 0 {
			r.Reasons = append(r.Reasons, "vector")
		}
		if c.activation > 0 {
			r.Reasons = append(r.Reasons, "association")
		}
		if c.resurface > 0 {
			r.Reasons = append(r.Reasons, "resurface")
		}
		comps := c.comps
		r.Components = &comps
		out = append(out, r)
	}
	return out
}

// queryPairs returns the adjacent term pairs of a query, as nlp.Terms analyses it.
func queryPairs(query string) [][2]string {
	ts := nlp.Terms(query)
	var out [][2]string
	seen := map[[2]string]bool{}
	for i := 0; i+1 < len(ts); i++ {
		pr := [2]string{ts[i], ts[i+1]}
		if pr[0] != pr[1] && !seen[pr] {
			seen[pr] = true
			out = append(out, pr)
		}
	}
	return out
}

// phraseMatch is the share of the query's adjacent term pairs that are adjacent in text.
func phraseMatch(pairs [][2]string, text string) float64 {
	ts := nlp.Terms(text)
	have := make(map[[2]string]bool, len(ts))
	for i := 0; i+1 < len(ts); i++ {
		have[[2]string{ts[i], ts[i+1]}] = true
	}
	n := 0
	for _, pr := range pairs {
		if have[pr] {
			n++
		}
	}
	return float64(n) / float64(len(pairs))
}

// markPhraseCandidates marks the n direct candidates of highest direct relevance for the
// phrase check: it tokenizes each text, and a phrase bonus (at most 0.3) cannot lift a
// candidate from further down into the results.
func markPhraseCandidates(cs *candidates, n int) {
	direct := make([]*candidate, 0, len(cs.byID))
	for _, c := range cs.byID {
		if c.direct() {
			direct = append(direct, c)
		}
	}
	sort.Slice(direct, func(i, j int) bool {
		if direct[i].base != direct[j].base {
			return direct[i].base > direct[j].base
		}
		return direct[i].id < direct[j].id
	})
	for i, c := range direct {
		c.phrase = i < n
	}
}
