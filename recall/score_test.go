package recall

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/embed"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/nlp"
)

// Known values of recall's arithmetic, worked by hand from the formulas in the doc comments
// (and, where a logarithm or a root is involved, with a calculator): no store, no pipeline.

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const day = 24 * time.Hour

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func TestFuse(t *testing.T) {
	for _, c := range []struct {
		name              string
		score, top        float64
		hit               bool
		cosine            float64
		wantBM, wantFused float64
	}{
		{"text and vector", 6, 8, true, 0.5, 0.75, 0.7}, // 0.8·0.75 + 0.2·0.5
		{"the best text hit", 8, 8, true, 0, 1, 0.8},
		{"vector only", 0, 8, false, 0.5, 0, 0.1},
		{"no text hits at all", 0, 0, false, 0.9, 0, 0.18},
	} {
		bm, fused := fuse(c.score, c.top, c.hit, c.cosine, 0.2)
		if !near(bm, c.wantBM) || !near(fused, c.wantFused) {
			t.Errorf("%s: fuse = %v, %v; want %v, %v", c.name, bm, fused, c.wantBM, c.wantFused)
		}
	}
}

func TestFreshness(t *testing.T) {
	for _, c := range []struct {
		name string
		t    time.Time
		want float64
	}{
		{"now", now, 1},
		{"one week: 2^-1/2", now.Add(-7 * day), 0.7071067811865476},
		{"two weeks", now.Add(-14 * day), 0.5},
		{"four weeks", now.Add(-28 * day), 0.25},
		{"from the future counts as new", now.Add(day), 1},
		{"unknown age", time.Time{}, 0.5},
	} {
		if got := freshness(c.t, now, 14*day); !near(got, c.want) {
			t.Errorf("%s: freshness = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestWallpaper(t *testing.T) {
	for _, c := range []struct {
		name  string
		count int
		last  time.Time
		want  float64
	}{
		{"never shown", 0, time.Time{}, 0},
		{"count without a time", 3, time.Time{}, 0},
		{"twice just now", 2, now, 0.4},
		{"five times just now saturates", 5, now, 1},
		{"four times a day ago", 4, now.Add(-day), 0.4}, // 4 · 0.5 / 5
		{"five times two days ago", 5, now.Add(-2 * day), 0.25},
		{"twelve times a day ago, capped", 12, now.Add(-day), 1},
		{"shown in the future counts as now", 1, now.Add(time.Hour), 0.2},
	} {
		if got := wallpaper(c.count, c.last, now, day, 5); !near(got, c.want) {
			t.Errorf("%s: wallpaper = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestRelevance(t *testing.T) {
	for _, c := range []struct {
		name          string
		direct, assoc float64
		inTime        bool
		want          float64
	}{
		{"direct only", 0.5, 0, false, 0.5},
		{"association only", 0, 0.3, false, 0.3},
		{"both, as independent evidence", 0.5, 0.5, false, 0.75},
		{"direct over 1 is clamped", 1.4, 0.2, false, 1},
		{"temporal bonus", 0.5, 0, true, 0.75},
		{"temporal bonus capped at 1", 0.9, 0, true, 1},
		{"temporal bonus alone", 0, 0, true, 0.25},
	} {
		if got := relevance(c.direct, c.assoc, c.inTime, 0.25); !near(got, c.want) {
			t.Errorf("%s: relevance = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestComponents(t *testing.T) {
	o := DefaultOptions()
	m := &models.Memory{Kind: models.KindFact, CreatedAt: now.Add(-14 * day), Confidence: 1.3, Importance: 0.4,
		SurfaceCount: 2, LastSurfaced: now.Add(-day)}
	for _, c := range []struct {
		name string
		s    signals
		want models.Components
	}{
		// Match: 0.8·coverage 0.6 + 0.2·cosine 0.5 (the local embedder's vector weight).
		{"direct match, no focal entity", signals{bm: 0.75, cover: 0.6, vector: 0.5, direct: 0.7, hops: -1},
			models.Components{Relevance: 0.7, BM25: 0.75, Coverage: 0.6, Match: 0.58, Vector: 0.5, Confidence: 1, Freshness: 0.5, Importance: 0.4, Novelty: 0.8}},
		{"phrase match: 1 − (1−0.5)(1−0.3·1)", signals{direct: 0.5, phrase: 1, phraseChecked: true, hops: -1},
			models.Components{Relevance: 0.65, Match: 0.3, Phrase: 1, Confidence: 1, Freshness: 0.5, Importance: 0.4, Novelty: 0.8}},
		{"phrase not checked adds nothing", signals{direct: 0.5, phrase: 1, hops: -1},
			models.Components{Relevance: 0.5, Confidence: 1, Freshness: 0.5, Importance: 0.4, Novelty: 0.8}},
		{"strong association capped at 1", signals{activation: 1.7, hops: 2},
			models.Components{Relevance: 1, Activation: 1, Proximity: 1.0 / 3, Confidence: 1, Freshness: 0.5, Importance: 0.4, Novelty: 0.8}},
		// Match leaves association out: only the temporal bonus.
		{"half association, in the named time, the focal entity itself", signals{direct: 0.2, activation: 0.5, inTimeRange: true, hops: 0},
			models.Components{Relevance: 0.85, Match: 0.25, Activation: 0.5, Proximity: 1, Confidence: 1, Freshness: 0.5, Importance: 0.4, Novelty: 0.8}},
	} {
		got := components(o, m, now, c.s)
		if !near(got.Relevance, c.want.Relevance) || !near(got.Proximity, c.want.Proximity) || !near(got.Novelty, c.want.Novelty) ||
			!near(got.Match, c.want.Match) {
			t.Errorf("%s: components = %+v\nwant %+v", c.name, got, c.want)
			continue
		}
		got.Relevance, got.Proximity, got.Novelty, got.Match = c.want.Relevance, c.want.Proximity, c.want.Novelty, c.want.Match
		if got != c.want {
			t.Errorf("%s: components = %+v\nwant %+v", c.name, got, c.want)
		}
	}
}

func TestWeighted(t *testing.T) {
	search := DefaultWeights[models.ModeSearch] // 0.80, 0.15, 0.04, proximity 0.04, 0.04, novelty 0
	comps := models.Components{Relevance: 1, Confidence: 0.5, Freshness: 0.5, Importance: 0.5, Proximity: 1, Novelty: 1}
	for _, c := range []struct {
		name  string
		w     Weights
		focal bool
		want  float64
	}{
		{"search, no focal entity: 0.915/1.03", search, false, 0.8883495145631068},
		{"search with a focal entity: 0.955/1.07", search, true, 0.8925233644859812},
		{"no weights", Weights{}, true, 0},
		{"relevance only", Weights{Relevance: 2}, false, 1},
	} {
		if got := weighted(c.w, comps, c.focal); !near(got, c.want) {
			t.Errorf("%s: weighted = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestVolunteerScore(t *testing.T) {
	for _, c := range []struct {
		name      string
		conf, act float64
		triggers  int
		want      float64
	}{
		{"association", 0.9, 0.8, 0, 0.72},
		{"association over 1 counts as 1", 0.9, 1.4, 0, 0.9},
		{"two triggers: 2/3", 0.9, 0, 2, 0.6},
		{"three triggers: full strength", 0.9, 0, 3, 0.9},
		{"five triggers, capped", 0.9, 0, 5, 0.9},
		{"the stronger of the two", 0.9, 0.9, 2, 0.81},
	} {
		if got := volunteerScore(c.conf, c.act, c.triggers, 3); !near(got, c.want) {
			t.Errorf("%s: volunteerScore = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestVolunteer(t *testing.T) {
	o := DefaultOptions()
	mem := func(conf float64, cooldown time.Time) *models.Memory {
		return &models.Memory{Confidence: conf, Schedule: models.Schedule{CooldownTo: cooldown}}
	}
	for _, c := range []struct {
		name      string
		mode      models.Mode
		threshold float64
		m         *models.Memory
		act       float64
		triggers  int
		wantScore float64
		wantOK    bool
	}{
		{"search admits activation at the floor", models.ModeSearch, 0.7, mem(0.5, time.Time{}), 0.1, 0, 0, true},
		{"search drops activation under the floor", models.ModeSearch, 0.7, mem(0.5, time.Time{}), 0.09, 0, 0, false},
		{"search ignores the threshold and cooldown", models.ModeSearch, 0.9, mem(0.1, now.Add(day)), 0.3, 0, 0, true},
		{"ambient: sure and associated", models.ModeAmbient, 0.7, mem(0.9, time.Time{}), 0.8, 0, 0.72, true},
		{"ambient: score at the threshold", models.ModeAmbient, 0.5, mem(0.5, time.Time{}), 1, 0, 0.5, true},
		{"ambient: below the threshold", models.ModeAmbient, 0.7, mem(0.5, time.Time{}), 1, 0, 0.5, false},
		{"ambient: one semantic path is not enough", models.ModeAmbient, 0.3, mem(0.9, time.Time{}), 0.45, 0, 0.405, false},
		{"ambient: queued, two triggers, 0.9·2/3 < 0.7", models.ModeAmbient, 0.7, mem(0.9, time.Time{}), 0, 2, 0.6, false},
		{"ambient: queued, three triggers", models.ModeAmbient, 0.7, mem(0.9, time.Time{}), 0, 3, 0.9, true},
		{"ambient: in a dismissal's cooldown", models.ModeAmbient, 0.7, mem(0.9, now.Add(day)), 1, 0, 0.9, false},
		{"ambient: cooldown over", models.ModeAmbient, 0.7, mem(0.9, now.Add(-day)), 1, 0, 0.9, true},
	} {
		score, ok := volunteer(o, c.mode, c.threshold, c.m, c.act, c.triggers, now)
		if !near(score, c.wantScore) || ok != c.wantOK {
			t.Errorf("%s: volunteer = %v, %v; want %v, %v", c.name, score, ok, c.wantScore, c.wantOK)
		}
	}
}

func TestSpecificity(t *testing.T) {
	for _, c := range []struct {
		name            string
		mentions, nodes int
		want            float64
	}{
		{"tiny graph", 5, 1, 1},
		{"no mentions recorded", 0, 1000, 1},
		{"mentioned once: ln(1001)/ln(1001)", 1, 1000, 1},
		{"in half the graph: ln 3/ln 1001", 500, 1000, 0.15901740961444308},
		{"everywhere: ln 2/ln 1001", 1000, 1000, 0.10032881506161208},
		{"ln 2/ln(10⁶+1), just over the floor", 1_000_000, 1_000_000, 0.05017166231245267},
		{"more mentions than nodes: the floor", 10_000, 100, 0.05},
	} {
		if got := specificity(c.mentions, c.nodes, 0.05); !near(got, c.want) {
			t.Errorf("%s: specificity = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestLendWave(t *testing.T) {
	edge := func(from, to string, typ models.EdgeType, w float64) *models.Edge {
		return &models.Edge{From: from, To: to, Type: typ, Weight: w}
	}
	got := lendWave(map[string]float64{"a": 1, "b": 0.5}, []*models.Edge{
		edge("a", "c", models.EdgeTemporal, 0.5),
		edge("c", "b", models.EdgeCoRetrieved, 0.4), // either direction
		edge("a", "b", models.EdgeTemporal, 0.5),    // seeds lend to each other
		edge("a", "x", models.EdgeMentions, 1),      // not a memory-to-memory edge
		edge("c", "d", models.EdgeTemporal, 1),      // c is no seed: lends nothing this hop
		edge("b", "y", models.EdgeTemporal, 0),      // no weight
	})
	want := map[string]float64{"c": 0.7, "b": 0.5, "a": 0.25} // c: 1·0.5 + 0.5·0.4
	if len(got) != len(want) {
		t.Fatalf("lendWave = %v, want %v", got, want)
	}
	for id, v := range want {
		if !near(got[id], v) {
			t.Errorf("lendWave[%s] = %v, want %v", id, got[id], v)
		}
	}
}

func TestLendSeeds(t *testing.T) {
	cs := &candidates{byID: map[string]*candidate{
		"m1": {id: "m1", base: 0.6},
		"m2": {id: "m2", base: 0.8},
		"m3": {id: "m3"}, // matched by nothing yet
	}}
	act := map[string]float64{"m2": 0.5, "m4": 1.3, "m5": 0.2}
	seeds := lendSeeds(cs, act, 10)
	want := map[string]float64{"m1": 0.6, "m2": 1, "m4": 1, "m5": 0.2}
	if len(seeds) != len(want) {
		t.Fatalf("lendSeeds = %v, want %v", seeds, want)
	}
	for id, v := range want {
		if !near(seeds[id], v) {
			t.Errorf("lendSeeds[%s] = %v, want %v", id, seeds[id], v)
		}
	}
	top := lendSeeds(cs, act, 2) // m2 and m4 tie at 1: both kept, over m1
	if len(top) != 2 || top["m2"] != 1 || top["m4"] != 1 {
		t.Errorf("lendSeeds(2) = %v, want m2 and m4", top)
	}
	top = lendSeeds(cs, act, 1) // the tie goes to the smaller id
	if len(top) != 1 || top["m2"] != 1 {
		t.Errorf("lendSeeds(1) = %v, want m2", top)
	}
}

func TestAssociated(t *testing.T) {
	cs := &candidates{byID: map[string]*candidate{"m1": {id: "m1", base: 0.6}}}
	act := map[string]float64{
		"m1": 0.3, "m2": 0.5, "m3": 0.5, "m4": 0.2, "m5": 0.05,
		"m6-3": 0.9, models.ConceptID("bees"): 0.9, // a chunk and a concept are never candidates
	}
	got := associated(cs, act, 2, 0.1)
	if len(got) != 2 || got[0] != (activated{"m2", 0.5}) || got[1] != (activated{"m3", 0.5}) {
		t.Errorf("associated(limit 2) = %v, want m2, m3", got)
	}
	if cs.byID["m1"].activation != 0.3 {
		t.Errorf("a proposed candidate's activation = %v, want 0.3", cs.byID["m1"].activation)
	}
	got = associated(cs, act, 10, 0.1)
	if len(got) != 3 || got[2] != (activated{"m4", 0.2}) {
		t.Errorf("associated(floor 0.1) = %v, want m2, m3, m4", got)
	}
}

// markTop: the direct match of best absolute match is the top, its margin the lead over
// the direct runner-up (alone, its whole match: the lead over nothing); ties go to the
// smaller id and leave no margin; an associative candidate is never top nor runner-up, and
// the weighted score does not count.
func TestMarkTop(t *testing.T) {
	cand := func(id string, match float64, direct bool) *candidate {
		c := &candidate{id: id}
		if direct {
			c.textRank = 1
		}
		c.comps.Match = match
		c.comps.Score = 1 - match // presentation: ignored
		return c
	}
	a, b, c := cand("a", 0.6, true), cand("b", 0.75, true), cand("c", 0.7, false)
	markTop([]*candidate{a, b, c})
	if b.comps.Top != 1 || !near(b.comps.Margin, 0.15) || a.comps.Top != 0 || c.comps.Top != 0 || a.comps.Margin != 0 {
		t.Errorf("top/margin: a %+v b %+v c %+v", a.comps, b.comps, c.comps)
	}
	late, early := cand("y", 0.5, true), cand("x", 0.5, true)
	markTop([]*candidate{late, early})
	if early.comps.Top != 1 || early.comps.Margin != 0 || late.comps.Top != 0 {
		t.Errorf("tie: y %+v x %+v, want x (smaller id) top with no margin", late.comps, early.comps)
	}
	alone := cand("z", 0.4, true)
	markTop([]*candidate{alone})
	if alone.comps.Top != 1 || alone.comps.Margin != 0.4 {
		t.Errorf("alone: %+v, want top with margin 0.4, its whole match", alone.comps)
	}
	// The associative p has the better match but is no runner-up: q is the only direct match.
	assoc, d := cand("p", 0.9, false), cand("q", 0.6, true)
	markTop([]*candidate{assoc, d})
	if assoc.comps.Top != 0 || assoc.comps.Margin != 0 || d.comps.Top != 1 || d.comps.Margin != 0.6 {
		t.Errorf("associative best: %+v %+v, want q top with margin 0.6, its whole match", assoc.comps, d.comps)
	}
	markTop(nil)
}

// overBest: BM25 over the turn's best kept candidate, so the best is 1 and the others keep
// their ratio to it; a list whose best is already 1 (or more) or 0 is left as it is.
func TestOverBest(t *testing.T) {
	bm := func(vs ...float64) []*candidate {
		var list []*candidate
		for _, v := range vs {
			c := &candidate{}
			c.comps.BM25 = v
			list = append(list, c)
		}
		return list
	}
	get := func(list []*candidate) []float64 {
		var vs []float64
		for _, c := range list {
			vs = append(vs, c.comps.BM25)
		}
		return vs
	}
	for _, tc := range []struct {
		name     string
		in, want []float64
	}{
		{"best under 1", []float64{0.5, 0.25, 0}, []float64{1, 0.5, 0}},
		{"best not first", []float64{0.2, 0.8}, []float64{0.25, 1}},
		{"best already 1", []float64{1, 0.4}, []float64{1, 0.4}},
		{"best over 1", []float64{1.5, 0.3}, []float64{1.5, 0.3}},
		{"all 0", []float64{0, 0}, []float64{0, 0}},
	} {
		list := bm(tc.in...)
		overBest(list)
		if got := get(list); !slices.Equal(got, tc.want) {
			t.Errorf("%s: overBest(%v) = %v, want %v", tc.name, tc.in, got, tc.want)
		}
	}
	overBest(nil)
}

// phraseMatchBySet is the definition phraseMatch must keep: the share of the query's
// pairs found in the set of text's adjacent term pairs.
func phraseMatchBySet(pairs [][2]string, text string) float64 {
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

func TestPhraseMatchBySet(t *testing.T) {
	words := strings.Fields("the bees bee keep keeps kept roof old cannery honey market rye bread saturday morning nadia tomas")
	rng := rand.New(rand.NewPCG(1, 2))
	text := func(n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = words[rng.IntN(len(words))]
		}
		return strings.Join(ws, " ")
	}
	for i := 0; i < 3000; i++ {
		q, doc := text(1+rng.IntN(25)), text(rng.IntN(60))
		pairs := pairsOf(nlp.Terms(q))
		if len(pairs) == 0 {
			continue
		}
		if got, want := phraseMatch(pairs, doc), phraseMatchBySet(pairs, doc); got != want {
			t.Fatalf("phraseMatch(%q, %q) = %v, want %v", q, doc, got, want)
		}
	}
}

// TestBestIsSortedPrefix: best keeps what sorting everything and keeping the first k
// keeps, in that order, ties (frequent: activations repeat) included.
func TestBestIsSortedPrefix(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 2000; i++ {
		n := rng.IntN(200)
		xs := make([]activated, n)
		for j := range xs {
			xs[j] = activated{id: fmt.Sprintf("m%04d", rng.IntN(10000)+j*10000), a: float64(rng.IntN(20)) / 8}
		}
		want := slices.Clone(xs)
		sort.Slice(want, func(i, j int) bool {
			return want[i].a > want[j].a || (want[i].a == want[j].a && want[i].id < want[j].id)
		})
		k := rng.IntN(n + 3)
		want = want[:min(k, n)]
		if got := best(slices.Clone(xs), k); !slices.Equal(got, want) {
			t.Fatalf("best(%v, %d) = %v, want %v", xs, k, got, want)
		}
	}
}

// TestVectorWeightByEmbedder: the lexical embedder keeps the weight it was tuned with, so
// its data directories rank exactly as before; a semantic embedder's cosine weighs more.
func TestVectorWeightByEmbedder(t *testing.T) {
	static, err := embed.NewStatic()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		emb  embed.Embedder
		want float64
	}{
		{nil, 0.2},
		{embed.NewLocal(0), 0.2},
		{embed.NewLocal(384), 0.2},
		{static, SemanticVectorWeight},
	} {
		if got := VectorWeightFor(c.emb); got != c.want {
			t.Errorf("VectorWeightFor(%T) = %v, want %v", c.emb, got, c.want)
		}
		if got := New(nil, c.emb, Options{}).opts.VectorWeight; got != c.want {
			t.Errorf("New(%T).VectorWeight = %v, want %v", c.emb, got, c.want)
		}
	}
	if got := New(nil, static, Options{VectorWeight: 0.3}).opts.VectorWeight; got != 0.3 {
		t.Errorf("an explicit VectorWeight is kept: got %v", got)
	}
}

// coverage is score over the query's information, at most 1; a store that does not
// measure the information (norm 0) falls back to the score over the turn's best.
func TestCoverage(t *testing.T) {
	for _, c := range []struct {
		name             string
		score, norm, top float64
		want             float64
	}{
		{"half the query's information", 3, 6, 9, 0.5},
		{"more than the information (a word repeated in the memory) is 1", 7, 6, 9, 1},
		{"no information measured: over the best", 3, 0, 6, 0.5},
		{"nothing", 0, 0, 0, 0},
	} {
		if got := coverage(c.score, c.norm, c.top); !near(got, c.want) {
			t.Errorf("%s: coverage(%v, %v, %v) = %v, want %v", c.name, c.score, c.norm, c.top, got, c.want)
		}
	}
}
