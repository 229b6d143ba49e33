package recall

import (
	"context"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/salience-ai/salience/learn"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/nlp"
	"github.com/salience-ai/salience/predict"
)

// rank hydrates the candidates, filters them, scores them, lets through the volunteered ones
// that pass the gates and orders them best first, ties by id (docs/design.md#fusion, docs/design.md#filters, docs/design.md#threshold-and-rerank).
func (p *Pipeline) rank(ctx context.Context, req *Request, in *intake, cs *candidates, threshold float64) ([]*candidate, error) {
	if len(cs.byID) == 0 {
		return nil, nil
	}
	if err := p.hydrate(ctx, req.Namespace, cs); err != nil {
		return nil, err
	}
	recent := recentlySurfaced(req.Mode, in.state, p.opts.RecentTurns)
	w := p.opts.Weights[req.Mode]
	speakers := map[string]float64{}
	markPhraseCandidates(cs, p.opts.PhraseChecks*req.Limit)
	if err := p.indexedPhrases(ctx, req.Namespace, in.pairs, cs); err != nil {
		return nil, err
	}
	kept := make([]*candidate, 0, len(cs.byID))
	for _, c := range cs.byID {
		if c.mem == nil || !keep(p.opts, req, in, c.mem, recent) {
			continue
		}
		c.comps = components(p.opts, c.mem, req.Now, c.signals(in, cs.hops))
		c.comps.Features = learn.Version
		if in.question {
			c.comps.Question = 1
		}
		c.comps.Score = weighted(w, c.comps, in.focal != "")
		history(&c.comps, c.mem, in.terms, speakers, p.speakers)
		kept = append(kept, c)
	}
	markTop(kept)
	overBest(kept)
	// Selective ambient recall (docs/design.md#threshold-and-rerank): in ambient mode a direct match surfaces only
	// when its p_use clears the threshold in force. A volunteered memory keeps the volunteer
	// gates, its volunteer score against the same threshold on the source's scale: the model
	// has no feature yet for the evidence that brings it (trigger matches of a queued memory),
	// so its p_use would hold back every resurfacing.
	gate := req.Mode == models.ModeAmbient
	vth := predict.VolunteerThreshold(threshold)
	list := make([]*candidate, 0, len(kept))
	for _, c := range kept {
		x := learn.Features(&c.comps)
		c.pUse = in.model.P(&x)
		c.score = c.comps.Score
		if !p.opts.NoModel {
			c.score += in.model.Shift(p.opts.Learn, &x)
		}
		if !c.direct() {
			var ok bool
			if c.comps.Volunteer, ok = volunteer(p.opts, req.Mode, vth, c.mem, c.activation, c.resurface, req.Now); !ok {
				continue
			}
		} else if gate && !(c.pUse >= threshold) {
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
	return list, nil
}

// markTop sets the turn-relative components of the relevance model: the direct match of
// best absolute match (Components.Match) is the turn's top (Top = 1) and Margin is its lead
// over the runner-up — over nothing, its whole match, when it is the only direct match.
// Match, not the weighted score, so that rank in turn does not move with a character's
// weights. Ties go to the smaller id, and a tie leaves no margin.
func markTop(list []*candidate) {
	var best, second *candidate
	for _, c := range list {
		if !c.direct() {
			continue
		}
		switch {
		case best == nil || c.comps.Match > best.comps.Match || (c.comps.Match == best.comps.Match && c.id < best.id):
			best, second = c, best
		case second == nil || c.comps.Match > second.comps.Match:
			second = c
		}
	}
	if best == nil {
		return
	}
	best.comps.Top = 1
	best.comps.Margin = best.comps.Match
	if second != nil {
		best.comps.Margin -= second.comps.Match
	}
}

// overBest rescales each candidate's BM25 (over the query's best, times what it says beyond
// the question) so that the best of the turn's candidates is 1: the turn's best text match
// may be an echo — the question asked before, stored word for word — whose own BM25 the
// echo rule took away, and the answer is then the best match that says something.
func overBest(list []*candidate) {
	best := 0.0
	for _, c := range list {
		best = max(best, c.comps.BM25)
	}
	if best <= 0 || best >= 1 {
		return
	}
	for _, c := range list {
		c.comps.BM25 /= best
	}
}

// history sets the components the relevance model reads besides the score's: the memory's
// engagement history, whether the query names its speaker (speakers caches the answer per
// speaker for the request, names the words of each name across requests), whether it is a
// conversation turn.
func history(c *models.Components, m *models.Memory, queryTerms []string, speakers map[string]float64, names *termCache) {
	c.Used = float64(m.UsageCount)
	if m.Kind == models.KindTurn {
		c.Turn = 1
	}
	sp := m.Source.Speaker
	if sp == "" {
		return
	}
	named, ok := speakers[sp]
	if !ok {
		for _, t := range names.terms(sp) {
			if slices.Contains(queryTerms, t) {
				named = 1
				break
			}
		}
		speakers[sp] = named
	}
	c.Speaker = named
}

// termCache remembers nlp.Terms of strings that recur across requests — speakers' names:
// a namespace has few speakers, and a call ranks memories of dozens of them. It keeps at
// most termCacheMax strings; past that, terms are analysed afresh. (A plain map under a
// read lock: sync.Map's trie cost more per lookup than the analysis it saved.)
type termCache struct {
	mu sync.RWMutex
	m  map[string][]string // shared: never modified
}

// termCacheMax bounds a termCache: a few megabytes of short names at most.
const termCacheMax = 1 << 15

// terms returns nlp.Terms(s), which the caller must not modify.
func (c *termCache) terms(s string) []string {
	c.mu.RLock()
	ts, ok := c.m[s]
	full := len(c.m) >= termCacheMax
	c.mu.RUnlock()
	if ok {
		return ts
	}
	if full {
		return nlp.Terms(s)
	}
	k := strings.Clone(s) // terms are slices of it: neither holds on to the caller's string
	ts = nlp.Terms(k)
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string][]string{}
	}
	if len(c.m) < termCacheMax {
		c.m[k] = ts
	}
	c.mu.Unlock()
	return ts
}

// explainModel gives each result the relevance model's contribution per feature.
func explainModel(m *learn.Model, cfg learn.Config, results []Result) {
	lambda := m.Lambda(cfg)
	for i := range results {
		r := &results[i]
		if r.Components == nil {
			continue
		}
		x := learn.Features(r.Components)
		c := m.Contributions(&x)
		r.Model = make(map[string]float64, learn.D)
		for j, name := range learn.FeatureNames {
			r.Model[name] = c[j]
		}
		r.Lambda = lambda
	}
}

// model reads the namespace's relevance model; a namespace without one has the prior.
func (p *Pipeline) model(ctx context.Context, ns string) (*learn.Model, error) {
	s, err := p.store.GetState(ctx, learn.Key(ns))
	if err != nil {
		return nil, err
	}
	m, err := learn.Decode(s, p.opts.Learn)
	if err != nil {
		return nil, models.Errorf(models.EINTERNAL, "%v", err)
	}
	return m, nil
}

// hydrate loads each candidate's memory and best unit as views (models.Store.ViewMemories):
// shared with the store, read only, without vectors. Ranking reads a hundred candidates
// and returns ten, so the results get their own copies afterwards (own), and ambient
// diversity the vectors it compares (withVectors).
func (p *Pipeline) hydrate(ctx context.Context, ns string, cs *candidates) error {
	want := make([]string, 0, 2*len(cs.byID))
	of := make([]*candidate, 0, cap(want)) // the candidate each id of want is for
	for id, c := range cs.byID {
		if c.mem == nil {
			want, of = append(want, id), append(of, c)
		}
		if c.unit != "" && c.unit != id {
			want, of = append(want, c.unit), append(of, c)
		}
	}
	ms, err := p.store.ViewMemories(ctx, ns, want, false)
	if err != nil {
		return err
	}
	// ms is in the order of want, missing ids skipped.
	for i, id := range want {
		if len(ms) == 0 || ms[0].ID != id {
			continue
		}
		m, c := ms[0], of[i]
		ms = ms[1:]
		if id == c.id {
			c.mem = m
		} else {
			c.unitMem = m
		}
	}
	for _, c := range cs.byID {
		if c.unit == "" || c.unit == c.id {
			if c.mem != nil && c.mem.ChunkCount == 0 {
				c.unitMem = c.mem
			}
		}
	}
	return nil
}

// ownLater gives each result its own copy of its memory, as GetMemories returns it (with its
// embedding), in place of the view ranking read; a memory deleted meanwhile keeps a copy of
// the view. It starts the read and returns the function that waits for it and gives the
// results their copies; without async it does both at once. With async (a
// remote store, where the read is a round trip) the read runs on a goroutine of its own, so
// the turn's record need not wait for it; results must not change until the function is
// called.
func (p *Pipeline) ownLater(ctx context.Context, req *Request, results []Result, async bool) func() error {
	if len(results) == 0 {
		return func() error { return nil }
	}
	byNS := map[string][]string{}
	var order []string
	for i := range results {
		m := results[i].Memory
		ns := m.Namespace
		if ns == "" {
			ns = req.Namespace
		}
		if _, ok := byNS[ns]; !ok {
			order = append(order, ns)
		}
		byNS[ns] = append(byNS[ns], m.ID)
	}
	read := func() (map[[2]string]*models.Memory, error) {
		got := make(map[[2]string]*models.Memory, len(results))
		for _, ns := range order {
			ms, err := p.store.GetMemories(ctx, ns, byNS[ns])
			if err != nil {
				return nil, err
			}
			for _, m := range ms {
				got[[2]string{ns, m.ID}] = m
			}
		}
		return got, nil
	}
	apply := func(got map[[2]string]*models.Memory, err error) error {
		if err != nil {
			return err
		}
		firstOf := map[[2]string]int{}
		for i := range results {
			r := &results[i]
			ns := r.Memory.Namespace
			if ns == "" {
				ns = req.Namespace
			}
			key := [2]string{ns, r.Memory.ID}
			switch m, ok := got[key]; {
			case !ok:
				r.Memory = r.Memory.Clone()
			case m == nil: // a memory twice: the second gets a copy of the first
				r.Memory = results[firstOf[key]].Memory.Clone()
			default:
				r.Memory = m
				got[key], firstOf[key] = nil, i
			}
		}
		return nil
	}
	if !async {
		err := apply(read())
		return func() error { return err }
	}
	type answer struct {
		got map[[2]string]*models.Memory
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		got, err := read()
		ch <- answer{got, err}
	}()
	return func() error {
		a := <-ch
		return apply(a.got, a.err)
	}
}

// signals gathers what the sources measured of a hydrated candidate.
func (c *candidate) signals(in *intake, hops map[string]int) signals {
	s := signals{bm: c.bm, cover: c.cover, vector: c.vecSim, direct: c.base, activation: c.activation, hops: -1}
	if c.direct() {
		s.restates = memoryRestates(c.mem, in.asked)
	}
	if len(in.pairs) > 0 && c.unitMem != nil && c.phrase {
		if c.phraseIndexed {
			s.phrase = c.phraseShare
		} else {
			s.phrase = phraseMatch(in.pairs, c.unitMem.Content)
		}
		s.phraseChecked = true
	}
	s.inTimeRange = len(in.ranges) > 0 && inRanges(c.mem.Time(), in.ranges)
	if d, ok := hops[c.id]; ok {
		s.hops = d
	}
	return s
}

func inRanges(t time.Time, rs []nlp.TimeRange) bool {
	for _, r := range rs {
		if !t.Before(r.Start) && t.Before(r.End) {
			return true
		}
	}
	return false
}

// phraseMatch is the share of the query's adjacent term pairs (distinct, as pairsOf
// makes them) that are adjacent in text. A query has a few pairs, so each of text's is
// compared with them; a long query's go into a set.
func phraseMatch(pairs [][2]string, text string) float64 {
	ts := nlp.Terms(text)
	n := 0
	if len(pairs) <= phraseScan {
		var found [phraseScan]bool
		n = nlp.PairsFound(ts, pairs, found[:])
	} else {
		want := make(map[[2]string]bool, len(pairs))
		for _, pr := range pairs {
			want[pr] = true
		}
		for i := 0; i+1 < len(ts); i++ {
			if pr := [2]string{ts[i], ts[i+1]}; want[pr] {
				want[pr] = false // counted once
				n++
			}
		}
	}
	return float64(n) / float64(len(pairs))
}

// phraseScan is the most query pairs phraseMatch compares one by one.
const phraseScan = 8

// indexedPhrases asks a store with a text index (models.PhraseIndex) for the phrase check
// of the marked candidates' units, which then need not be analysed again: stemming the
// content of thirty candidates was a twentieth of a recall's CPU.
func (p *Pipeline) indexedPhrases(ctx context.Context, ns string, pairs [][2]string, cs *candidates) error {
	px, ok := p.store.(models.PhraseIndex)
	if !ok || len(pairs) == 0 {
		return nil
	}
	var ids []string
	var of []*candidate
	for _, c := range cs.byID {
		if c.phrase && c.unitMem != nil {
			ids, of = append(ids, c.unitMem.ID), append(of, c)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	shares, found, err := px.Phrases(ctx, ns, pairs, ids)
	if err != nil {
		return err
	}
	for i, c := range of {
		c.phraseShare, c.phraseIndexed = shares[i], found[i]
	}
	return nil
}

// markPhraseCandidates marks the n direct candidates of highest direct relevance for the
// phrase check (Options.PhraseChecks).
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
