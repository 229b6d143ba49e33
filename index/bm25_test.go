package index

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/nlp"
)

// The small corpus every exact test uses. N = 4, total length 9, avgdl = 2.25.
func smallCorpus() *BM25 {
	x := NewBM25()
	// Written out of id order on purpose.
	x.Add("d", []string{"fish"})
	x.Add("b", []string{"cat", "cat", "dog"})
	x.Add("c", []string{"dog", "bird"})
	x.Add("a", []string{"cat", "sat", "mat"})
	return x
}

// prior is a term's general prior in an index of docs documents, the factor on its idf.
func prior(term string, docs int) float64 { return nlp.Prior(term, docs) }

func assertHits(t *testing.T, got, want []Hit) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d hits %v, want %d %v", len(got), got, len(want), want)
	}
	for i := range want {
		if got[i].ID != want[i].ID || math.Abs(got[i].Score-want[i].Score) > 1e-9 {
			t.Fatalf("hit %d: got %+v, want %+v (all: %v)", i, got[i], want[i], got)
		}
	}
}

func TestBM25ExactScores(t *testing.T) {
	x := smallCorpus()
	// idf of a term in 2 of 4 docs: ln(1 + (4−2+0.5)/(2+0.5)) = ln 2, in 1 of 4 ln(1 + 3.5/1.5);
	// each times the term's general prior.
	ln2 := math.Log(2)
	idfCat, idfDog := ln2*prior("cat", 4), ln2*prior("dog", 4)
	idfBird, idfFish := math.Log(1+3.5/1.5)*prior("bird", 4), math.Log(1+3.5/1.5)*prior("fish", 4)
	// Length normalization k1·(1 − b + b·dl/avgdl): dl 3 → 1.2·(0.25 + 1) = 1.5;
	// dl 2 → 1.2·(0.25 + 0.75·2/2.25) = 1.1.
	tests := []struct {
		name  string
		query []string
		want  []Hit
	}{
		{"one term, tf decides", []string{"cat"}, []Hit{
			{ID: "b", Score: idfCat * 2 * 2.2 / (2 + 1.5)},
			{ID: "a", Score: idfCat * 1 * 2.2 / (1 + 1.5)},
		}},
		{"rare term weighs more", []string{"dog", "bird"}, []Hit{
			{ID: "c", Score: idfDog*2.2/(1+1.1) + idfBird*2.2/(1+1.1)},
			{ID: "b", Score: idfDog * 2.2 / (1 + 1.5)},
		}},
		{"repeated query term counts twice", []string{"cat", "cat"}, []Hit{
			{ID: "b", Score: 2 * idfCat * 2 * 2.2 / (2 + 1.5)},
			{ID: "a", Score: 2 * idfCat * 1 * 2.2 / (1 + 1.5)},
		}},
		{"unknown terms ignored", []string{"zebra", "fish"}, []Hit{
			// fish: n = 1, dl = 1 → norm 1.2·(0.25 + 0.75/2.25) = 0.7.
			{ID: "d", Score: idfFish * 2.2 / (1 + 0.7)},
		}},
		{"nothing matches", []string{"zebra"}, []Hit{}},
		{"empty query", nil, []Hit{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertHits(t, x.Search(tt.query, 10), tt.want)
		})
	}
	if got := x.Len(); got != 4 {
		t.Fatalf("Len = %d, want 4", got)
	}
}

func TestBM25TopKAndTies(t *testing.T) {
	x := NewBM25()
	for _, id := range []string{"e", "b", "d", "a", "c"} {
		x.Add(id, []string{"same", "words"})
	}
	got := x.Search([]string{"same"}, 3)
	ids := hitIDs(got)
	if want := []string{"a", "b", "c"}; !slices.Equal(ids, want) {
		t.Fatalf("ids = %v, want %v", ids, want)
	}
	if got[0].Score != got[2].Score {
		t.Fatalf("tied documents scored differently: %v", got)
	}
	if got := x.Search([]string{"same"}, 0); got != nil {
		t.Fatalf("k=0 returned %v", got)
	}
}

func TestBM25RemoveAndReplace(t *testing.T) {
	x := smallCorpus()
	if got := x.Terms(); got != 6 { // fish cat dog bird sat mat
		t.Fatalf("Terms = %d, want 6", got)
	}
	x.Remove("a")
	x.Remove("missing")
	if got := x.Len(); got != 3 {
		t.Fatalf("Len = %d, want 3", got)
	}
	// N = 3, total length 6, avgdl 2. cat is in 1 doc: idf ln(1 + 2.5/1.5);
	// b has dl 3: norm 1.2·(0.25 + 0.75·1.5) = 1.65.
	assertHits(t, x.Search([]string{"cat"}, 10), []Hit{
		{ID: "b", Score: math.Log(1+2.5/1.5) * prior("cat", 3) * 2 * 2.2 / (2 + 1.65)},
	})

	// Replacing b with a one-term document: N = 3, total 4, avgdl 4/3.
	x.Add("b", []string{"bird"})
	if got := x.Search([]string{"cat"}, 10); len(got) != 0 {
		t.Fatalf("replaced document still found: %v", got)
	}
	// bird: n = 2 of 3 → idf ln(1 + 1.5/2.5). b: dl 1 → 1.2·(0.25 + 0.75·0.75) = 0.975;
	// c: dl 2 → 1.2·(0.25 + 0.75·1.5) = 1.65.
	idf := math.Log(1+1.5/2.5) * prior("bird", 3)
	assertHits(t, x.Search([]string{"bird"}, 10), []Hit{
		{ID: "b", Score: idf * 2.2 / (1 + 0.975)},
		{ID: "c", Score: idf * 2.2 / (1 + 1.65)},
	})
	if got := x.Len(); got != 3 {
		t.Fatalf("Len = %d, want 3", got)
	}
}

// naiveBM25 is the textbook formula over maps, the reference for randomized tests.
func naiveBM25(docs map[string][]string, query []string, k int) []Hit {
	n := float64(len(docs))
	total := 0
	df := map[string]int{}
	for _, terms := range docs {
		total += len(terms)
		seen := map[string]bool{}
		for _, t := range terms {
			if !seen[t] {
				seen[t] = true
				df[t]++
			}
		}
	}
	avgdl := float64(total) / n
	var hits []Hit
	for id, terms := range docs {
		s := 0.0
		for _, q := range query {
			tf := 0
			for _, t := range terms {
				if t == q {
					tf++
				}
			}
			if tf == 0 {
				continue
			}
			d := float64(df[q])
			idf := math.Log(1 + (n-d+0.5)/(d+0.5))
			s += idf * float64(tf) * (bm25K1 + 1) / (float64(tf) + bm25K1*(1-bm25B+bm25B*float64(len(terms))/avgdl))
		}
		if s > 0 {
			hits = append(hits, Hit{ID: id, Score: s})
		}
	}
	slices.SortFunc(hits, func(a, b Hit) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits
}

// TestBM25MatchesReference churns a random corpus through adds, replacements and enough
// removals to trigger compactions, and compares every query with the textbook formula.
func TestBM25MatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	vocab := make([]string, 60)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%d", i)
	}
	randDoc := func() []string {
		d := make([]string, 1+r.IntN(8))
		for i := range d {
			d[i] = vocab[int(math.Floor(math.Pow(r.Float64(), 2)*float64(len(vocab))))]
		}
		return d
	}
	x := NewBM25()
	docs := map[string][]string{}
	check := func(step string) {
		t.Helper()
		if x.Len() != len(docs) {
			t.Fatalf("%s: Len = %d, want %d", step, x.Len(), len(docs))
		}
		for range 20 {
			q := randDoc()
			q = q[:min(len(q), 1+r.IntN(3))]
			got, want := x.Search(q, 7), naiveBM25(docs, q, 7)
			if len(got) != len(want) {
				t.Fatalf("%s: query %v: got %v, want %v", step, q, got, want)
			}
			for i := range want {
				if got[i].ID != want[i].ID || math.Abs(got[i].Score-want[i].Score) > 1e-9 {
					t.Fatalf("%s: query %v hit %d: got %+v, want %+v", step, q, i, got[i], want[i])
				}
			}
		}
	}
	next := 0
	for round := range 4 {
		for range 1500 {
			id := fmt.Sprintf("doc%05d", next)
			next++
			d := randDoc()
			x.Add(id, d)
			docs[id] = d
		}
		check(fmt.Sprintf("round %d after adds", round))
		for id := range docs {
			switch r.IntN(3) {
			case 0:
				x.Remove(id)
				delete(docs, id)
			case 1:
				d := randDoc()
				x.Add(id, d)
				docs[id] = d
			}
		}
		check(fmt.Sprintf("round %d after removals", round))
	}
}

func TestBM25Concurrent(t *testing.T) {
	x := smallCorpus()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 300 {
				id := fmt.Sprintf("g%d-%d", g, i)
				x.Add(id, []string{"cat", "extra"})
				if got := x.Search([]string{"cat"}, 3); len(got) == 0 {
					t.Errorf("no hits while writing")
					return
				}
				x.Remove(id)
			}
		})
	}
	wg.Wait()
	if got := x.Len(); got != 4 {
		t.Fatalf("Len = %d, want 4", got)
	}
	assertHits(t, x.Search([]string{"cat"}, 10), []Hit{
		{ID: "b", Score: math.Log(2) * prior("cat", 4) * 2 * 2.2 / (2 + 1.5)},
		{ID: "a", Score: math.Log(2) * prior("cat", 4) * 1 * 2.2 / (1 + 1.5)},
	})
}

func hitIDs(hs []Hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.ID
	}
	return out
}

// TestPhrasesMatchTheTerms: Phrases finds what comparing the pairs with each document's
// analysed terms finds — the share of distinct pairs adjacent there — through adds, a
// replacement, removals and a compaction; an id not indexed is not found.
func TestPhrasesMatchTheTerms(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	vocab := []string{"bee", "roof", "old", "canneri", "honey", "market", "rye", "bread", "nadia", "tomas"}
	randTerms := func(n int) []string {
		ts := make([]string, n)
		for i := range ts {
			ts[i] = vocab[r.IntN(len(vocab))]
		}
		return ts
	}
	share := func(pairs [][2]string, terms []string) float64 {
		n := 0
		for _, pr := range pairs {
			for i := 0; i+1 < len(terms); i++ {
				if terms[i] == pr[0] && terms[i+1] == pr[1] {
					n++
					break
				}
			}
		}
		return float64(n) / float64(len(pairs))
	}
	x := NewBM25()
	docs := map[string][]string{}
	add := func(id string, terms []string) { x.Add(id, terms); docs[id] = terms }
	for i := range 3000 {
		add(fmt.Sprintf("d%04d", i), randTerms(r.IntN(12)))
	}
	check := func(step string) {
		t.Helper()
		nonzero := 0
		for range 200 {
			var pairs [][2]string
			seen := map[[2]string]bool{}
			for range 1 + r.IntN(10) {
				pr := [2]string{vocab[r.IntN(len(vocab))], vocab[r.IntN(len(vocab))]}
				if r.IntN(8) == 0 {
					pr[1] = "absent"
				}
				if !seen[pr] {
					seen[pr] = true
					pairs = append(pairs, pr)
				}
			}
			ids := []string{"missing"}
			for range 30 {
				ids = append(ids, fmt.Sprintf("d%04d", r.IntN(3200)))
			}
			shares, found := x.Phrases(pairs, ids)
			for i, id := range ids {
				terms, ok := docs[id]
				if found[i] != ok {
					t.Fatalf("%s: %s found = %v, indexed = %v", step, id, found[i], ok)
				}
				want := 0.0
				if ok {
					want = share(pairs, terms)
				}
				if shares[i] != want {
					t.Fatalf("%s: %s pairs %v terms %v: share %v, want %v", step, id, pairs, terms, shares[i], want)
				}
				if want > 0 {
					nonzero++
				}
			}
		}
		if nonzero < 500 {
			t.Fatalf("%s: only %d nonzero shares: the check tested little", step, nonzero)
		}
	}
	check("adds")
	for i := range 1200 { // replacements, then removals past a quarter: a compaction
		id := fmt.Sprintf("d%04d", i)
		if i%2 == 0 {
			add(id, randTerms(1+r.IntN(12)))
			continue
		}
		x.Remove(id)
		delete(docs, id)
	}
	for i := 1200; i < 2000; i++ {
		id := fmt.Sprintf("d%04d", i)
		x.Remove(id)
		delete(docs, id)
	}
	if len(x.ids) >= 3000+600 { // every add and replacement took an ordinal
		t.Fatalf("%d ordinals: no compaction ran", len(x.ids))
	}
	check("after replacements, removals and a compaction")
	// df follows the documents: every remaining term's df is its count of documents.
	df := map[string]int{}
	for _, terms := range docs {
		for _, tm := range dedupe(terms) {
			df[tm]++
		}
	}
	for tm, id := range x.termIDs {
		if got := x.lists[id].df; got != df[tm] {
			t.Fatalf("df(%s) = %d, want %d", tm, got, df[tm])
		}
	}
}

func dedupe(ts []string) []string {
	var out []string
	for _, t := range ts {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// fillerCorpus is a new namespace of five memories. The query below shares one word with each
// of two: "place", a common English word, with a short memory, and "harmonica", a rare one,
// with a long memory. Here both occur once: the namespace alone weighs them the same.
var fillerCorpus = []struct{ id, text string }{
	{"dinner", "We could grab dinner at my place on Friday."},
	{"harmonica", "Lena has been learning the harmonica from online videos since her brother gave her his old blues harp for her birthday."},
	{"bakery", "The bakery on Elm Street closes early on Sundays."},
	{"peanuts", "Marcus is allergic to peanuts."},
	{"printer", "The printer at work keeps jamming."},
}

const fillerQuery = "Do you know a place to fix a harmonica?"

// Failure 3 of issue 41: filler decided the match. The shared common word must weigh less
// than the shared content word, so the content match ranks first though its memory is three
// times longer.
func TestFillerNeverDecides(t *testing.T) {
	x := NewBM25()
	for _, d := range fillerCorpus {
		x.Add(d.id, nlp.Terms(d.text))
	}
	place, harmonica := nlp.Terms("place")[0], nlp.Terms("harmonica")[0]
	x.mu.RLock()
	wPlace, wHarmonica := x.idf(place), x.idf(harmonica)
	x.mu.RUnlock()
	// Both are in 1 of 5 memories: namespace idf ln(1 + 4.5/1.5) = ln 4 each.
	if want := math.Log(4) * nlp.Prior(place, 5); math.Abs(wPlace-want) > 1e-12 {
		t.Fatalf("idf(place) = %v, want ln 4 · prior = %v", wPlace, want)
	}
	if want := math.Log(4); math.Abs(wHarmonica-want) > 1e-12 {
		t.Fatalf("idf(harmonica) = %v, want ln 4 (a rare word keeps its whole weight)", wHarmonica)
	}
	hits := x.Search(nlp.Terms(fillerQuery), 10)
	if ids := hitIDs(hits); !slices.Equal(ids, []string{"harmonica", "dinner"}) {
		t.Fatalf("Search(%q) = %v, want harmonica, then dinner", fillerQuery, hits)
	}
}

// The learned field weighs a learned word as BM25 weighs it: a memory that learned a common
// word scores that word's share of a rare one's, alpha·weight·idf with the prior in idf.
func TestLearnedFieldCarriesThePrior(t *testing.T) {
	x := NewBM25()
	for _, d := range fillerCorpus {
		x.Add(d.id, nlp.Terms(d.text))
	}
	place, harmonica := nlp.Terms("place")[0], nlp.Terms("harmonica")[0]
	l := NewLearned()
	l.Set("bakery", []models.LearnedTerm{{Term: place, Weight: 1}})
	l.Set("printer", []models.LearnedTerm{{Term: harmonica, Weight: 1}})
	const alpha = 0.3
	hits := x.SearchLearned([]string{place, harmonica}, 10, l, alpha)
	got := map[string]float64{}
	for _, h := range hits {
		got[h.ID] = h.Score
	}
	// Both words are in one of five memories: idf ln 4, times the prior.
	for _, c := range []struct {
		id   string
		want float64
	}{
		{"bakery", alpha * math.Log(4) * nlp.Prior(place, 5)},
		{"printer", alpha * math.Log(4)},
	} {
		if math.Abs(got[c.id]-c.want) > 1e-6 {
			t.Errorf("%s scores %v, want %v (all: %v)", c.id, got[c.id], c.want, hits)
		}
	}
	if !(got["printer"] > got["bakery"]) {
		t.Errorf("hits %v, want the memory that learned the rare word above the one that learned the common word", hits)
	}
}
