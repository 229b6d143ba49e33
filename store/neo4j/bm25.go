package neo4j

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/nlp"
)

// A namespace's text search is its own: its cost and its scores do not depend on any other
// namespace. Lucene's statistics (document frequencies, document count, average length) span
// its whole index, so Lucene only proposes candidates and the score is computed here, from
// the namespace's own statistics kept in the graph:
//
//   - each unit's analysed terms are indexed with the namespace's token in front
//     (ixterms, "<token>_<term>"), so a query, made of the namespace's tokens too, reads only
//     the namespace's postings, and the document frequency Lucene uses is the namespace's;
//   - (:Term {ns, t, df}) counts the namespace's units holding each term, and the :Space its
//     units and their total length in terms; CreateMemories and DeleteMemory keep both under
//     the namespace's write lock.
//
// The score is the embedded store's Okapi BM25 (package index; TestBM25MatchesIndex checks
// the two agree): idf(t) = ln(1 + (N − n + 0.5)/(n + 0.5))·nlp.Prior(t, N), a document
// scoring Σ idf(t)·qtf·tf·(k1+1)/(tf + k1·(1 − b + b·dl/avgdl)) over the query's distinct
// terms, and a hit's Norm is the query's information, Σ ln(1 + (N − n + 0.5)/(n + 0.5)) over
// its terms. Lucene proposes candidateFactor × k units by its own BM25 over the namespace's
// postings, whose order differs from this one only through the index-wide length statistics.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// candidateFactor is how many more units than asked Lucene proposes for rescoring.
const candidateFactor = 2

// nsToken is the namespace's prefix of its indexed terms: hex, so Lucene's whitespace
// analyzer and query parser take "<token>_<term>" as one term, and fixed in length however
// long the namespace. 64 bits: the query keeps only the namespace's nodes all the same.
func nsToken(ns string) string {
	h := sha256.Sum256([]byte(ns))
	return hex.EncodeToString(h[:8])
}

// ixTerms is the text the full-text index holds for a unit of ns with these terms.
func ixTerms(ns string, terms []string) string {
	if len(terms) == 0 {
		return ""
	}
	tok := nsToken(ns) + "_"
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(tok)
		b.WriteString(t)
	}
	return b.String()
}

// termCounts is how many of a batch's units hold each term, and their total length: what
// a write adds to (or a delete takes from) the namespace's statistics.
type termCounts struct {
	df          map[string]int
	units, tlen int
}

func (c *termCounts) add(terms []string) {
	if c.df == nil {
		c.df = map[string]int{}
	}
	c.units++
	c.tlen += len(terms)
	seen := make(map[string]bool, len(terms))
	for _, t := range terms {
		if !seen[t] {
			seen[t] = true
			c.df[t]++
		}
	}
}

// rows are the counts as query parameters, sign times each, in term order.
func (c *termCounts) rows(sign int) []map[string]any {
	out := make([]map[string]any, 0, len(c.df))
	for _, t := range slices.Sorted(maps.Keys(c.df)) { // one order for every writer: no deadlock between two
		out = append(out, map[string]any{"t": t, "n": int64(sign * c.df[t])})
	}
	return out
}

// textQuery is an analysed query: its distinct terms in first-occurrence order, and how
// often each occurs.
type textQuery struct {
	terms []string
	qtf   []int
}

func newTextQuery(terms []string) textQuery {
	var q textQuery
	at := map[string]int{}
	for _, t := range terms {
		if i, ok := at[t]; ok {
			q.qtf[i]++
			continue
		}
		at[t] = len(q.terms)
		q.terms, q.qtf = append(q.terms, t), append(q.qtf, 1)
	}
	return q
}

// lucene is the query Lucene runs for candidates: each term with the namespace's token, a
// quoted term (one token with the whitespace analyzer), OR'ed, repeated as often as it
// occurs, and weighted by its general prior as the score weighs it (at a mid-sized
// namespace's prior: only the candidates' order depends on it).
func (q textQuery) lucene(ns string) string {
	tok := nsToken(ns) + "_"
	var b strings.Builder
	for i, t := range q.terms {
		for range q.qtf[i] {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(`"` + tok)
			for _, r := range t { // terms are letters and digits (nlp.Tokens); escaped all the same
				if r == '"' || r == '\\' {
					b.WriteByte('\\')
				}
				b.WriteRune(r)
			}
			b.WriteByte('"')
			if g := nlp.Prior(t, priorCandidates); g < 1 {
				b.WriteString("^" + strconv.FormatFloat(max(g, 1e-4), 'f', 4, 64))
			}
		}
	}
	return b.String()
}

// priorCandidates is the namespace size at which lucene weighs terms by their prior.
const priorCandidates = 1000

// textStats are the namespace's statistics a query needs: its units, their total length
// in terms, and the document frequency of each of the query's distinct terms.
type textStats struct {
	units, tlen int64
	df          []int64
}

// candidate is a unit Lucene proposed, with its analysed terms.
type textCandidate struct {
	id    string
	terms []string
}

// score ranks the candidates by the namespace's BM25 and returns the k best, ties to the
// smaller id, each with the query's information as Norm. Candidates holding none of the
// terms are dropped.
func (q textQuery) score(st textStats, cands []textCandidate, k int) []models.Hit {
	if st.units <= 0 || len(cands) == 0 {
		return nil
	}
	n := float64(st.units)
	avgdl := float64(st.tlen) / n
	weights := make([]float64, len(q.terms))
	info := 0.0
	at := make(map[string]int, len(q.terms))
	for i, t := range q.terms {
		df := 0.0
		if i < len(st.df) {
			df = float64(st.df[i])
		}
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		info += idf * float64(q.qtf[i])
		weights[i] = idf * nlp.Prior(t, int(st.units)) * float64(q.qtf[i]) * (bm25K1 + 1)
		at[t] = i
	}
	out := make([]models.Hit, 0, len(cands))
	tf := make([]float64, len(q.terms))
	for _, c := range cands {
		clear(tf)
		for _, t := range c.terms {
			if i, ok := at[t]; ok {
				tf[i]++
			}
		}
		norm := bm25K1 * (1 - bm25B + bm25B*float64(len(c.terms))/avgdl)
		s := 0.0
		for i, f := range tf {
			if f > 0 {
				s += weights[i] * f / (f + norm)
			}
		}
		if s > 0 {
			out = append(out, models.Hit{ID: c.id, Score: s, Norm: info})
		}
	}
	return bestHits(out, k)
}
