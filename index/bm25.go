// Package index holds Salience's in-memory search structures: a BM25 inverted index, a vector
// index (exact below 20,000 vectors, quantized and rescored above) and the adjacency of the graph. A store keeps them per namespace, rebuilds
// them from its system of record at start and writes every change through (docs/design.md#embedded-store).
// Every structure is safe for concurrent use.
package index

import (
	"cmp"
	"math"
	"slices"
	"sync"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/nlp"
)

// Hit is one search result: a document id and its score, best first.
type Hit = models.Hit

// Okapi BM25 parameters, the usual defaults (Robertson & Zaragoza 2009; also FTS5's and
// Lucene's): k1 saturates term frequency, b weighs document-length normalization.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// Compaction of tombstoned documents: once at least compactMinDead documents are dead and
// they are at least a quarter of all ordinals, postings are rewritten without them. That
// bounds wasted work in Search at 25 % while keeping a compaction (O(postings)) rare.
const compactMinDead = 1024

// BM25 is an inverted index scored with Okapi BM25.
//
// Documents get dense int32 ordinals; postings hold ordinals and term frequencies, so scoring
// is a tight loop into a dense accumulator. Remove marks a tombstone (postings are filtered
// at search time) and compaction rewrites the postings when tombstones pile up.
//
// Scores: idf(t) = ln(1 + (N − n + 0.5)/(n + 0.5))·g(t, N) — Lucene's non-negative form, where
// N is the number of live documents and n those containing t, times the general prior
// g = nlp.Prior(t, N) in 0..1, how much the word tells in general English. The namespace
// tells which words are common here; the prior tells which are filler anywhere, which a
// small namespace cannot: among five memories "place" and "harmonica" both occur once and
// would weigh the same. The prior fades as N grows and the namespace's own statistics know. A document scores Σ idf(t)·tf·(k1+1)/(tf + k1·(1 − b + b·dl/avgdl))
// over query terms. A term repeated in the query counts once per occurrence, as each
// repetition is its own OR'ed phrase in FTS5.
type BM25 struct {
	mu      sync.RWMutex
	termIDs map[string]int32
	lists   []postings // by term id
	ids     []string   // by ordinal
	ords    map[string]int32
	lens    []int32  // document length in terms by ordinal; −1 marks a tombstone
	dead    []uint64 // tombstones as a bitmap by ordinal: what a scan tests, 1/32 of lens's bytes
	// docTerms holds each document's analysed terms in order, as term ids: what Remove
	// needs to maintain df (each distinct one) and Phrases to find adjacent pairs.
	docTerms [][]int32
	live     int
	nDead    int
	// ascending is how many ordinals, from 0, hold ids in strictly ascending order: there
	// ordinal order is id order, so a search breaks score ties by comparing ordinals, not
	// strings at random addresses. A rebuild adds in id order, and new ids (ULIDs) sort
	// after older ones, so it is usually every ordinal.
	ascending int32
	// Add's scratch for a document's distinct terms and their frequencies, under mu.
	addDistinct, addTFs []int32
	totalLen            int64 // sum of live document lengths
	scratch             sync.Pool
}

type postings struct {
	docs []int32  // ordinals, ascending
	tfs  []uint32 // by posting: the term's frequency in the document << 16 | the document's length (see pack)
	df   int      // live documents containing the term
	// The largest tf and the shortest document length ever posted: they bound the term's
	// contribution for SearchLearned's pruning. Removal leaves them (a bound of a superset
	// still bounds); compaction recomputes them.
	maxTF, minDL int32
}

// NewBM25 returns an empty index.
func NewBM25() *BM25 {
	return &BM25{termIDs: map[string]int32{}, ords: map[string]int32{}}
}

// Len returns the number of documents.
func (x *BM25) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.live
}

// Terms returns the number of distinct terms indexed (what the term dictionary holds).
func (x *BM25) Terms() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.termIDs)
}

// Add indexes a document under id with its analysed terms (nlp.Terms). Adding an id that is
// present replaces the document.
func (x *BM25) Add(id string, terms []string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if o, ok := x.ords[id]; ok {
		x.removeLocked(o)
	}
	o := int32(len(x.ids))
	if x.ascending == o && (o == 0 || x.ids[o-1] < id) {
		x.ascending++
	}
	x.ids = append(x.ids, id)
	x.ords[id] = o
	x.lens = append(x.lens, int32(len(terms)))
	if int(o)/64 >= len(x.dead) {
		x.dead = append(x.dead, 0)
	}
	x.live++
	x.totalLen += int64(len(terms))

	// Count term frequencies. Short documents dominate, so a linear scan over the distinct
	// terms seen so far beats a map.
	seq := make([]int32, len(terms))
	distinct, tfs := x.addDistinct[:0], x.addTFs[:0] // scratch: only seq is kept
	defer func() { x.addDistinct, x.addTFs = distinct[:0], tfs[:0] }()
	for j, t := range terms {
		tid, ok := x.termIDs[t]
		if !ok {
			tid = int32(len(x.lists))
			x.termIDs[t] = tid
			x.lists = append(x.lists, postings{})
		}
		seq[j] = tid
		if i := slices.Index(distinct, tid); i >= 0 {
			tfs[i]++
			continue
		}
		distinct = append(distinct, tid)
		tfs = append(tfs, 1)
	}
	for i, tid := range distinct {
		p := &x.lists[tid]
		if dl := min(int32(len(terms)), maxPacked); len(p.docs) == 0 || dl < p.minDL {
			p.minDL = dl
		}
		p.maxTF = max(p.maxTF, min(tfs[i], maxPacked))
		p.docs = append(p.docs, o)
		p.tfs = append(p.tfs, pack(tfs[i], int32(len(terms))))
		p.df++
	}
	x.docTerms = append(x.docTerms, seq)
}

// Grow makes room for n more documents without reallocating, for bulk loads.
func (x *BM25) Grow(n int) {
	if n <= 0 {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.ids = slices.Grow(x.ids, n)
	x.lens = slices.Grow(x.lens, n)
	x.docTerms = slices.Grow(x.docTerms, n)
	if len(x.ords) == 0 {
		x.ords = make(map[string]int32, n)
	}
}

// Remove deletes the document; a missing id is ignored.
func (x *BM25) Remove(id string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if o, ok := x.ords[id]; ok {
		x.removeLocked(o)
	}
}

func (x *BM25) removeLocked(o int32) {
	delete(x.ords, x.ids[o])
	x.live--
	x.nDead++
	x.totalLen -= int64(x.lens[o])
	x.lens[o] = -1
	x.dead[o/64] |= 1 << (o % 64)
	seq := x.docTerms[o]
	for i, tid := range seq {
		if !slices.Contains(seq[:i], tid) { // once per distinct term
			x.lists[tid].df--
		}
	}
	x.docTerms[o] = nil
	if x.nDead >= compactMinDead && 4*x.nDead >= len(x.ids) {
		x.compactLocked()
	}
}

// compactLocked drops tombstoned documents and renumbers the live ones. The renumbering is
// monotonic, so postings stay sorted by ordinal.
func (x *BM25) compactLocked() {
	remap := make([]int32, len(x.ids))
	n := int32(0)
	for o := range x.ids {
		if x.lens[o] < 0 {
			remap[o] = -1
			continue
		}
		remap[o] = n
		x.ids[n] = x.ids[o]
		x.lens[n] = x.lens[o]
		x.docTerms[n] = x.docTerms[o]
		x.ords[x.ids[n]] = n
		n++
	}
	clear(x.ids[n:])
	clear(x.docTerms[n:])
	x.ids, x.lens, x.docTerms = x.ids[:n], x.lens[:n], x.docTerms[:n]
	x.ascending = ascendingPrefix(x.ids)
	x.dead = make([]uint64, (int(n)+63)/64)
	x.nDead = 0
	for tid := range x.lists {
		p := &x.lists[tid]
		j := 0
		p.maxTF, p.minDL = 0, 0
		for i, d := range p.docs {
			if r := remap[d]; r >= 0 {
				p.docs[j], p.tfs[j] = r, p.tfs[i]
				if dl := int32(p.tfs[i] & 0xffff); j == 0 || dl < p.minDL {
					p.minDL = dl
				}
				p.maxTF = max(p.maxTF, int32(p.tfs[i]>>16))
				j++
			}
		}
		p.docs, p.tfs = p.docs[:j], p.tfs[:j]
		if j == 0 {
			p.docs, p.tfs = nil, nil
		}
	}
}

// bm25Scratch is the per-search accumulator: a dense score per ordinal plus the ordinals
// touched, so only those are reset afterwards.
type bm25Scratch struct {
	acc     []int64
	touched []int32
	// MaxScore's buffers (SearchLearned).
	qs    []qterm
	order []int
	rest  []int64
	cands []int32
	sel   []int64
	table [tableSize]int64 // scanPostings's contributions by (tf, dl)
	// closedAt is the position (in ub order) of the first term whose postings the last
	// search looked up instead of scanning; −1 when it scanned them all.
	closedAt int
}

// Search returns the k best documents for the query terms, best first; ties go to the
// smaller id so results are deterministic.
func (x *BM25) Search(terms []string, k int) []Hit { return x.SearchLearned(terms, k, nil, 0) }

// SearchLearned is Search with the learned field l added to each document's score:
// alpha·Σ weight·idf over the query's terms the document learned (idf as in BM25). A learned
// term of weight 1 counts alpha times a content occurrence of the term in a document of
// average length, about. Only indexed units learn (a chunked memory's learned terms, kept
// on the parent, are not searched).
//
// Scores are summed in fixed point (units of 2⁻³², each contribution rounded up), so a sum
// does not depend on the order of its terms — and the search prunes as MaxScore does (Turtle
// & Flood 1995): terms are taken in order of their largest possible contribution (ub: the
// term's weight at its postings' highest tf and shortest document), rare terms first. Once
// the contributions the remaining terms could still add sum to less than the k-th best
// partial score, no document the earlier terms missed can enter the top k: the remaining,
// longer postings are no longer scanned but looked up (binary search) for the documents
// that still can. The hits are those of an exhaustive scan (TestSearchLearnedEqualsExhaustive).
func (x *BM25) SearchLearned(terms []string, k int, l *Learned, alpha float64) []Hit {
	if k <= 0 || len(terms) == 0 {
		return nil
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.live == 0 {
		return nil
	}
	s, _ := x.scratch.Get().(*bm25Scratch)
	if s == nil {
		s = &bm25Scratch{}
	}
	defer x.scratch.Put(s)
	return x.searchLocked(s, terms, k, l, alpha)
}

// Phrases answers recall's phrase check from the index: for each of ids, the share of pairs
// (distinct pairs of analysed terms) that occur as adjacent terms of the document, as
// comparing the pairs with nlp.Terms of its text would find them, without analysing the
// text again; found[i] is false for an id not indexed.
func (x *BM25) Phrases(pairs [][2]string, ids []string) (shares []float64, found []bool) {
	shares, found = make([]float64, len(ids)), make([]bool, len(ids))
	x.mu.RLock()
	defer x.mu.RUnlock()
	// The pairs as term ids; a pair with a term no document has cannot occur.
	want := make([][2]int32, 0, len(pairs))
	for _, pr := range pairs {
		a, okA := x.termIDs[pr[0]]
		b, okB := x.termIDs[pr[1]]
		if okA && okB {
			want = append(want, [2]int32{a, b})
		}
	}
	// The documents' term lists lie at random: read in passes that prefetch them.
	seqs, ords := prefetchedLists(x.ords, x.docTerms, ids)
	seen := make([]bool, len(want))
	for i, o := range ords {
		if o < 0 {
			continue
		}
		found[i] = true
		if len(want) == 0 {
			continue
		}
		n := nlp.PairsFound(seqs[i], want, seen)
		shares[i] = float64(n) / float64(len(pairs))
	}
	return shares, found
}

// fixedScale is the fixed-point unit of summed scores: 2³². A score of 30 is 2³⁷, far from
// int64's 2⁶³, and a unit (2·10⁻¹⁰) is far below any score difference that matters.
const fixedScale = 1 << 32

// fixed is x in fixed point, rounded up: ≥ 1 for any x ≥ 0, so a touched document's sum
// is never 0.
func fixed(x float64) int64 { return int64(x*fixedScale) + 1 }

// searchLocked is SearchLearned with x.mu held, in the buffers of s.
func (x *BM25) searchLocked(s *bm25Scratch, terms []string, k int, l *Learned, alpha float64) []Hit {
	s.closedAt = -1
	if len(s.acc) < len(x.ids) {
		s.acc = make([]int64, len(x.ids)+len(x.ids)/4)
	}
	acc := s.acc
	touched := s.touched[:0]

	n := float64(x.live)
	avgdl := float64(x.totalLen) / n
	if avgdl == 0 {
		avgdl = 1
	}
	// Per-document normalization k1·(1 − b + b·dl/avgdl) = c0 + c1·dl.
	c0, c1 := bm25K1*(1-bm25B), bm25K1*bm25B/avgdl
	qs := s.qs[:0]
	for i, t := range terms {
		if slices.Contains(terms[:i], t) {
			continue // counted with its first occurrence
		}
		tid, ok := x.termIDs[t]
		if !ok {
			continue
		}
		p := &x.lists[tid]
		if p.df == 0 {
			continue
		}
		qtf := 1
		for _, u := range terms[i+1:] {
			if u == t {
				qtf++
			}
		}
		w := x.idf(t) * float64(qtf) * (bm25K1 + 1)
		tf := float64(p.maxTF)
		// One unit more than fixed gives, for float rounding in the bound's own formula.
		qs = append(qs, qterm{p: p, w: w, ub: fixed(w*tf/(tf+c0+c1*float64(p.minDL))) + 1})
	}
	// The learned field is one more "term": its bound is the largest learned score.
	var learned map[int32]int64
	var learnedUB int64
	if l != nil && alpha > 0 {
		learned = x.learnedScores(terms, l, alpha)
		for _, v := range learned {
			learnedUB = max(learnedUB, v)
		}
	}
	s.qs = qs

	// Terms by ub, largest first; rest[i] bounds what terms i… and the learned field can
	// still add.
	order := s.order[:0]
	for i := range qs {
		order = append(order, i)
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(qs[b].ub, qs[a].ub) })
	s.order = order
	rest := slices.Grow(s.rest[:0], len(order)+1)[:len(order)+1]
	rest[len(order)] = learnedUB
	for i := len(order) - 1; i >= 0; i-- {
		rest[i] = rest[i+1] + qs[order[i]].ub
	}
	s.rest = rest

	dead := x.dead
	left := 0 // postings of the terms not yet taken
	for _, q := range qs {
		left += len(q.p.docs)
	}
	closed := false
	cands := s.cands[:0]
	for i, qi := range order {
		q := qs[qi]
		// Try to close when the postings left far outnumber the documents touched: a try
		// costs a pass over those, closing saves the scan of these.
		if !closed && len(touched) >= k && left > 4*len(touched) {
			// The k-th best partial score exceeds rest[i] iff k documents do.
			for _, d := range touched {
				if acc[d] > rest[i] {
					cands = append(cands, d)
				}
			}
			if len(cands) >= k {
				theta := kth(s, acc, cands, k)
				cands = cands[:0]
				for _, d := range touched {
					if acc[d]+rest[i] >= theta {
						cands = append(cands, d)
					}
				}
				// Close only when looking the candidates up (a binary search each, per
				// term) costs less than scanning what is left.
				if closed = len(cands)*lookupCost <= left; closed {
					s.closedAt = i
					slices.Sort(cands)
				}
			}
			if !closed {
				cands = cands[:0]
			}
		}
		left -= len(q.p.docs)
		ws := q.w * fixedScale
		if !closed {
			touched = scanPostings(s, acc, dead, touched, q.p, ws, c0, c1)
			continue
		}
		// Closed: only the candidates can still enter; look them up in the postings.
		docs, pos := q.p.docs, 0
		for _, d := range cands {
			j, found := slices.BinarySearch(docs[pos:], d)
			pos += j
			if !found {
				continue
			}
			tf, dl := unpack(q.p.tfs[pos])
			acc[d] += contribution(ws, tf, dl, c0, c1)
		}
		if len(cands) > k {
			theta := kth(s, acc, cands, k)
			keep := cands[:0]
			for _, d := range cands {
				if acc[d]+rest[i+1] >= theta {
					keep = append(keep, d)
				}
			}
			cands = keep
		}
	}
	final := touched
	if closed {
		final = cands
	}
	for o, v := range learned {
		switch {
		case !closed && acc[o] == 0:
			touched = append(touched, o)
			final = touched
		case closed && acc[o] == 0:
			continue // untouched, and pruned: rest bounded it
		case closed:
			if _, found := slices.BinarySearch(cands, o); !found {
				continue // pruned
			}
		}
		acc[o] += v
	}

	h := topK{k: k, ids: x.ids, ascending: x.ascending}
	for _, d := range final {
		a := acc[d]
		if !closed {
			acc[d] = 0 // final is touched: reset it in the same pass
		}
		// A score below the worst kept cannot enter (ties still go to offer, by id).
		if sc := float64(a) * (1.0 / fixedScale); len(h.heap) < k || sc >= h.heap[0].score {
			h.offer(d, sc)
		}
	}
	if closed {
		for _, d := range touched {
			acc[d] = 0
		}
	}
	s.touched = touched[:0]
	s.cands = cands[:0]
	out := h.sorted()
	if len(out) > 0 {
		norm := x.information(terms)
		for i := range out {
			out[i].Norm = norm
		}
	}
	return out
}

// information is the query's information: Σ over its terms, each occurrence counted as the
// score counts it, of the namespace's own idf (nsIDF; a term the index never saw at the
// largest, as if one document held it) — without the general prior, so a match on common
// words alone, which the prior weighs down, covers little of it. A document of average
// length holding every query term once, none of them common, scores it; Score/information
// is how much of the query a match covers, on a scale that means the same in every query.
func (x *BM25) information(terms []string) float64 {
	sum := 0.0
	for _, t := range terms {
		sum += x.nsIDF(t)
	}
	return sum
}

// contribution is a posting's share of a document's score in fixed point, rounded up: ws is
// the term's weight in fixed point, tf and dl the posting's term frequency and document
// length, c0 + c1·dl the document's length normalization. Every path that scores a posting
// calls it, so they agree to the unit.
func contribution(ws, tf, dl, c0, c1 float64) int64 { return int64(ws*tf/(tf+c0+c1*dl)) + 1 }

// tableMin is the shortest postings list scanPostings scores through a table: filling one
// costs tableSize divisions, a few hundred postings' worth.
const tableMin = 1024

// tableSize is the number of (tf, dl) pairs a table holds: tf < 4 and dl < 64, the postings
// of short chat turns. A posting outside it is scored by division.
const tableSize = 256

// scanPostings adds the contributions of p's postings to acc and returns touched with the
// documents touched for the first time appended; tombstones are skipped.
//
// Two things make it several times faster than the plain loop on long lists. A list of
// tableMin or more postings is scored through a table of its common (tf, dl) pairs, filled
// by contribution, so the common posting costs a load instead of a division. And a newly
// touched document is recorded without a branch: the ordinal is always written past the
// end of touched, and the end moves only when the document was untouched — whether it was
// is as likely as not in the middle terms, so a branch there mispredicts half the time.
func scanPostings(s *bm25Scratch, acc []int64, dead []uint64, touched []int32, p *postings, ws, c0, c1 float64) []int32 {
	docs := p.docs
	tfs := p.tfs[:len(docs)]
	touched = slices.Grow(touched, len(docs))
	buf := touched[:cap(touched)]
	n := len(touched)
	if len(docs) < tableMin {
		for j, d := range docs {
			if dead[d>>6]&(1<<(d&63)) != 0 {
				continue // tombstone
			}
			a := acc[d]
			buf[n] = d
			if a == 0 { // every contribution is ≥ 1, so 0 means untouched
				n++
			}
			tf, dl := unpack(tfs[j])
			acc[d] = a + contribution(ws, tf, dl, c0, c1)
		}
		return buf[:n]
	}
	table := &s.table
	for i := range table {
		tf, dl := float64(i>>6), float64(i&63)
		table[i] = contribution(ws, tf, dl, c0, c1)
	}
	for j, d := range docs {
		if dead[d>>6]&(1<<(d&63)) != 0 {
			continue // tombstone
		}
		a := acc[d]
		buf[n] = d
		if a == 0 {
			n++
		}
		var c int64
		if t := tfs[j]; t&^(3<<16|63) == 0 {
			c = table[uint8(t>>10|t)&0xff]
		} else {
			tf, dl := unpack(t)
			c = contribution(ws, tf, dl, c0, c1)
		}
		acc[d] = a + c
	}
	return buf[:n]
}

// maxPacked is the largest term frequency and document length a posting holds: longer
// documents score as if they had 65,535 terms (chunking keeps indexed units far shorter).
const maxPacked = 1<<16 - 1

// pack is a posting's term frequency and document length in one word, each clamped to
// maxPacked: one sequential read where the length was a random access by ordinal.
func pack(tf, dl int32) uint32 { return uint32(min(tf, maxPacked))<<16 | uint32(min(dl, maxPacked)) }

// unpack is pack's inverse, as floats for scoring.
func unpack(p uint32) (tf, dl float64) { return float64(p >> 16), float64(p & 0xffff) }

// lookupCost is a binary search's cost in posting scans (log₂ of a long list, and the
// branch misses a scan does not have): SearchLearned closes only when the candidates'
// lookups cost less than the scans they replace.
const lookupCost = 16

// qterm is one distinct query term of a search: its postings, weight and the largest
// contribution it can make, in fixed point.
type qterm struct {
	p  *postings
	w  float64
	ub int64
}

// kth returns the k-th largest acc over docs (len(docs) ≥ k), selecting in s.sel.
func kth(s *bm25Scratch, acc []int64, docs []int32, k int) int64 {
	sel := s.sel[:0]
	for _, d := range docs {
		sel = append(sel, acc[d])
	}
	s.sel = sel
	return quickselect(sel, k-1)
}

// quickselect returns the value that would be at index i were a sorted descending; it
// reorders a.
func quickselect(a []int64, i int) int64 {
	lo, hi := 0, len(a)-1
	for lo < hi {
		p := a[lo+(hi-lo)/2]
		l, r := lo, hi
		for l <= r {
			for a[l] > p {
				l++
			}
			for a[r] < p {
				r--
			}
			if l <= r {
				a[l], a[r] = a[r], a[l]
				l++
				r--
			}
		}
		switch {
		case i <= r:
			hi = r
		case i >= l:
			lo = l
		default:
			return a[i]
		}
	}
	return a[i]
}

// idf is a term's weight per match, as the type's comment defines it: the namespace's idf
// times the general prior. x.mu is held.
//
// Σ idf over a query's terms is the most a document of average length could score per
// (k1+1): what recall can hold a score to as an absolute match strength.
func (x *BM25) idf(t string) float64 { return x.nsIDF(t) * nlp.Prior(t, x.live) }

// nsIDF is a term's idf from the namespace's statistics alone, ln(1 + (N − n + 0.5)/(n + 0.5));
// a term no live document has gets the largest, ln(1 + (N + 0.5)/0.5). x.mu is held.
func (x *BM25) nsIDF(t string) float64 {
	df := 0.0
	if tid, ok := x.termIDs[t]; ok {
		df = float64(x.lists[tid].df)
	}
	n := float64(x.live)
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// learnedScores returns the learned field's contribution by ordinal, alpha·Σ weight·idf in
// fixed point; x.mu is held.
func (x *BM25) learnedScores(terms []string, l *Learned, alpha float64) map[int32]int64 {
	add := map[string]float64{}
	l.scores(terms, x.idf, add)
	out := make(map[int32]int64, len(add))
	for id, v := range add {
		o, ok := x.ords[id]
		if !ok || x.lens[o] < 0 || v <= 0 {
			continue
		}
		out[o] = fixed(alpha * v)
	}
	return out
}

// topK keeps the k best (ordinal, score) pairs in a min-heap whose root is the worst kept.
// Equal scores rank by id ascending: by ordinal when both are below ascending (ordinals
// whose order is their ids', see ascendingPrefix), else by comparing the ids.
type topK struct {
	k         int
	ids       []string
	ascending int32
	heap      []scored
}

// ascendingPrefix returns how many of ids, from the first, are in strictly ascending order.
func ascendingPrefix(ids []string) int32 {
	n := 1
	for n < len(ids) && ids[n-1] < ids[n] {
		n++
	}
	return int32(min(n, len(ids)))
}

type scored struct {
	ord   int32
	score float64
}

// worse reports whether a ranks below b.
func (h *topK) worse(a, b scored) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	if a.ord < h.ascending && b.ord < h.ascending {
		return a.ord > b.ord
	}
	return h.ids[a.ord] > h.ids[b.ord]
}

func (h *topK) offer(ord int32, score float64) {
	c := scored{ord, score}
	if len(h.heap) < h.k {
		h.heap = append(h.heap, c)
		// sift up
		i := len(h.heap) - 1
		for i > 0 {
			p := (i - 1) / 2
			if !h.worse(h.heap[i], h.heap[p]) {
				break
			}
			h.heap[i], h.heap[p] = h.heap[p], h.heap[i]
			i = p
		}
		return
	}
	if !h.worse(h.heap[0], c) {
		return
	}
	h.heap[0] = c
	// sift down
	i, n := 0, len(h.heap)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h.worse(h.heap[r], h.heap[l]) {
			m = r
		}
		if !h.worse(h.heap[m], h.heap[i]) {
			break
		}
		h.heap[i], h.heap[m] = h.heap[m], h.heap[i]
		i = m
	}
}

// sorted returns the kept pairs as hits, best first.
func (h *topK) sorted() []Hit {
	slices.SortFunc(h.heap, func(a, b scored) int {
		switch {
		case h.worse(b, a):
			return -1
		case h.worse(a, b):
			return 1
		}
		return 0
	})
	out := make([]Hit, len(h.heap))
	for i, c := range h.heap {
		out[i] = Hit{ID: h.ids[c.ord], Score: c.score}
	}
	return out
}
