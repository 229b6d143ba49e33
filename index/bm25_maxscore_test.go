package index

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/salience-ai/salience/models"
)

// exhaustive is SearchLearned without pruning: every posting of every query term scored,
// then the learned field — what MaxScore must equal bit for bit, hits and scores.
func exhaustive(x *BM25, terms []string, k int, l *Learned, alpha float64) []Hit {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if k <= 0 || len(terms) == 0 || x.live == 0 {
		return nil
	}
	acc := map[int32]int64{}
	n := float64(x.live)
	avgdl := float64(x.totalLen) / n
	if avgdl == 0 {
		avgdl = 1
	}
	c0, c1 := bm25K1*(1-bm25B), bm25K1*bm25B/avgdl
	for i, t := range terms {
		if slices.Contains(terms[:i], t) {
			continue
		}
		tid, ok := x.termIDs[t]
		if !ok || x.lists[tid].df == 0 {
			continue
		}
		p := &x.lists[tid]
		qtf := 0
		for _, u := range terms {
			if u == t {
				qtf++
			}
		}
		w := x.idf(t) * float64(qtf) * (bm25K1 + 1)
		for j, d := range p.docs {
			if x.lens[d] < 0 {
				continue
			}
			tf := float64(p.tfs[j] >> 16) // the posting's tf; its document's length is x.lens
			acc[d] += fixed(w * tf / (tf + c0 + c1*float64(x.lens[d])))
		}
	}
	if l != nil && alpha > 0 {
		for o, v := range x.learnedScores(terms, l, alpha) {
			acc[o] += v
		}
	}
	h := topK{k: k, ids: x.ids}
	for d, sc := range acc {
		h.offer(d, float64(sc)*(1.0/fixedScale))
	}
	out := h.sorted()
	// The query's information: each occurrence's namespace idf, a term no document has at
	// the largest (df 0).
	norm := 0.0
	for _, t := range terms {
		df := 0.0
		if tid, ok := x.termIDs[t]; ok {
			df = float64(x.lists[tid].df)
		}
		norm += math.Log(1 + (n-df+0.5)/(df+0.5))
	}
	for i := range out {
		out[i].Norm = norm
	}
	return out
}

// zipfCorpus indexes n documents of Zipf-distributed words, so a few terms have postings
// thousands long and most are rare: what MaxScore prunes on. One document in sixteen is
// 60–119 words long, past the (tf, dl) pairs scanPostings keeps a table for.
func zipfCorpus(rng *rand.Rand, n, vocab int) (*BM25, [][]string) {
	z := rand.NewZipf(rng, 1.1, 2, uint64(vocab-1))
	x := NewBM25()
	docs := make([][]string, n)
	for i := range n {
		dl := 1 + rng.IntN(30)
		if rng.IntN(16) == 0 {
			dl = 60 + rng.IntN(60)
		}
		d := make([]string, dl)
		for j := range d {
			d[j] = fmt.Sprintf("w%d", z.Uint64())
		}
		docs[i] = d
		x.Add(fmt.Sprintf("doc%05d", i), d)
	}
	return x, docs
}

func TestSearchLearnedEqualsExhaustive(t *testing.T) {
	t.Parallel() // the package's longest test under -race: the others run beside it
	rng := rand.New(rand.NewPCG(7, 8))
	x, docs := zipfCorpus(rng, 20_000, 3_000)
	l := NewLearned()
	for i := 0; i < 500; i++ {
		id := fmt.Sprintf("doc%05d", rng.IntN(len(docs)))
		l.Set(id, []models.LearnedTerm{{Term: docs[rng.IntN(len(docs))][0], Weight: 0.2 + rng.Float64()}})
	}
	closed := 0
	check := func(t *testing.T, round int) {
		t.Helper()
		for q := 0; q < 300; q++ {
			terms := make([]string, 1+rng.IntN(12))
			for j := range terms {
				switch rng.IntN(10) {
				case 0:
					terms[j] = "absent"
				case 1, 2:
					terms[j] = fmt.Sprintf("w%d", rng.IntN(5)) // the longest postings
				default:
					doc := docs[rng.IntN(len(docs))]
					terms[j] = doc[rng.IntN(len(doc))]
				}
			}
			if rng.IntN(5) == 0 {
				terms = append(terms, terms[0]) // a repeated query term
			}
			k := []int{1, 5, 40, 200}[rng.IntN(4)]
			var ll *Learned
			alpha := 0.0
			if rng.IntN(2) == 0 {
				ll, alpha = l, 0.5
			}
			s := &bm25Scratch{}
			x.mu.RLock()
			got := x.searchLocked(s, terms, k, ll, alpha)
			x.mu.RUnlock()
			if s.closedAt >= 0 {
				closed++
			}
			want := exhaustive(x, terms, k, ll, alpha)
			if len(got) != len(want) {
				t.Fatalf("round %d, query %v k %d: %d hits, want %d", round, terms, k, len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("round %d, query %v k %d: hit %d = %+v, want %+v (bit for bit)", round, terms, k, i, got[i], want[i])
				}
			}
		}
	}
	// Added in id order, every ordinal breaks score ties by ordinal (topK.ascending); the
	// reference compares ids.
	if int(x.ascending) != len(x.ids) {
		t.Fatalf("ascending = %d after adds in id order, want all %d", x.ascending, len(x.ids))
	}
	check(t, 0)
	// Tombstones left in the postings, then a compaction that recomputes the bounds.
	for i := 0; i < 3_000; i++ {
		x.Remove(fmt.Sprintf("doc%05d", rng.IntN(len(docs))))
	}
	check(t, 1)
	// Documents added again get new ordinals past ids greater than theirs: their ties go by
	// id, beside ordinals that still go by ordinal.
	for i := 0; i < 1_000; i++ {
		j := rng.IntN(len(docs))
		x.Add(fmt.Sprintf("doc%05d", j), docs[j])
	}
	if int(x.ascending) >= len(x.ids) || x.ascending < 10_000 {
		t.Fatalf("ascending = %d of %d ordinals after adding old ids again", x.ascending, len(x.ids))
	}
	check(t, 1)
	for i := 0; i < 6_000; i++ {
		x.Remove(fmt.Sprintf("doc%05d", rng.IntN(len(docs))))
	}
	check(t, 2)
	if closed < 100 {
		t.Fatalf("only %d of 1,200 searches pruned: the equality above tested little", closed)
	}
	t.Logf("%d of 1,200 searches pruned", closed)
}

// TestSearchLearnedPrunes shows the pruning happens: on a corpus where a rare term decides
// the top k, the long postings of the common terms are looked up, not scanned, and the
// answer is still the exhaustive one.
func TestSearchLearnedPrunes(t *testing.T) {
	x := NewBM25()
	for i := range 10_000 {
		d := []string{"common", "filler"}
		if i%1000 == 0 {
			d = append(d, "rare")
		}
		x.Add(fmt.Sprintf("d%05d", i), d)
	}
	terms := []string{"common", "rare", "filler"}
	got := x.SearchLearned(terms, 5, nil, 0)
	want := exhaustive(x, terms, 5, nil, 0)
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if got[0].ID != "d00000" || len(got) != 5 {
		t.Fatalf("the rare term's documents should lead: %v", got)
	}
	// rare's 10 documents reach the 5th best with one term, and what common and filler could
	// add to anything else is less than that: their postings are looked up, not scanned.
	s := &bm25Scratch{}
	x.mu.RLock()
	x.searchLocked(s, terms, 5, nil, 0)
	x.mu.RUnlock()
	if s.closedAt != 1 {
		t.Fatalf("closed at term %d of the ub order, want 1 (after rare)", s.closedAt)
	}
	x.mu.RLock()
	x.searchLocked(s, []string{"common", "filler"}, 5, nil, 0)
	x.mu.RUnlock()
	if s.closedAt != -1 {
		t.Fatalf("with no rare term every posting must be scanned; closed at %d", s.closedAt)
	}
}

func FuzzSearchLearned(f *testing.F) {
	f.Add(uint64(1), uint8(3), uint8(10))
	f.Add(uint64(99), uint8(1), uint8(1))
	f.Fuzz(func(t *testing.T, seed uint64, nq, k uint8) {
		rng := rand.New(rand.NewPCG(seed, 1))
		x, docs := zipfCorpus(rng, 300, 60)
		for i := 0; i < int(seed%50); i++ {
			x.Remove(fmt.Sprintf("doc%05d", rng.IntN(len(docs))))
		}
		terms := make([]string, 1+int(nq)%10)
		for j := range terms {
			terms[j] = fmt.Sprintf("w%d", rng.IntN(70))
		}
		kk := 1 + int(k)%50
		got, want := x.SearchLearned(terms, kk, nil, 0), exhaustive(x, terms, kk, nil, 0)
		if !slices.Equal(got, want) {
			t.Fatalf("query %v k %d: got %v, want %v", terms, kk, got, want)
		}
	})
}

// TestPackClamps: a posting holds tf and document length to 65,535 each; longer ones score as
// that long.
func TestPackClamps(t *testing.T) {
	for _, c := range []struct{ tf, dl int32 }{{1, 1}, {3, 17}, {65535, 65535}, {70000, 1 << 20}} {
		tf, dl := unpack(pack(c.tf, c.dl))
		if tf != float64(min(c.tf, maxPacked)) || dl != float64(min(c.dl, maxPacked)) {
			t.Fatalf("pack(%d, %d) unpacks to %v, %v", c.tf, c.dl, tf, dl)
		}
	}
}

// The query's information (Hit.Norm) is Σ over the query's words, repeats counted, of the
// namespace's own idf — the general prior left out — an unseen word at the largest idf:
// three documents, "kayak" in one, "paddle" in two.
func TestInformation(t *testing.T) {
	x := NewBM25()
	x.Add("a", []string{"kayak", "paddle"})
	x.Add("b", []string{"paddle", "river"})
	x.Add("c", []string{"tea"})
	hits := x.Search([]string{"kayak", "paddle", "paddle", "zeppelin"}, 3)
	want := math.Log(1+2.5/1.5) + 2*math.Log(1+1.5/2.5) + math.Log(1+3.5/0.5) // 0.981 + 2·0.470 + 2.079
	if len(hits) != 2 || math.Abs(hits[0].Norm-want) > 1e-12 || hits[1].Norm != hits[0].Norm {
		t.Fatalf("hits %+v, want two with Norm %v", hits, want)
	}
	if !(hits[0].Score < hits[0].Norm) {
		t.Errorf("a match of part of the query scored %v, at least its information %v", hits[0].Score, hits[0].Norm)
	}
	if got := x.Search([]string{"zeppelin"}, 3); len(got) != 0 {
		t.Errorf("an unseen word found %+v", got)
	}
}
