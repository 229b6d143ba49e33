package neo4j

import (
	"context"
	"slices"
	"strings"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/salience-ai/salience/index"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/nlp"
)

// searchText reads, in one round trip, the namespace's statistics for the query's terms and
// the candidates Lucene proposes from the namespace's postings (bm25.go), each with its
// analysed terms for the score.
const searchText = `OPTIONAL MATCH (sp:Space {ns: $ns})
	CALL () {
		UNWIND $terms AS t
		OPTIONAL MATCH (x:Term {ns: $ns, t: t})
		RETURN collect(coalesce(x.df, 0)) AS dfs
	}
	CALL () {
		CALL db.index.fulltext.queryNodes('` + textIndex + `', $query, {limit: $n}) YIELD node
		WHERE node.ns = $ns
		RETURN collect([node.id, node.terms]) AS cands
	}
	RETURN coalesce(sp.units, 0) AS units, coalesce(sp.tlen, 0) AS tlen, dfs, cands`

// SearchText returns the top k indexed units of ns by the namespace's BM25 over the terms
// nlp.Terms makes of the query (bm25.go): Lucene proposes, the namespace's statistics score.
// EINVALID when k < 1.
func (s *Store) SearchText(ctx context.Context, ns, query string, k int) ([]models.Hit, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	if k < 1 {
		return nil, models.Invalid("k", "k must be at least 1")
	}
	terms := nlp.Terms(query)
	if len(terms) == 0 {
		return nil, nil
	}
	q := newTextQuery(terms)
	var hits []models.Hit
	err := s.read(ctx, "search text", func(tx runner) error {
		recs, err := collect(ctx, tx, searchText, textParams(ns, q, k))
		if err != nil {
			return err
		}
		hits = textHits(q, recs[0].Values, k)
		return nil
	})
	return hits, err
}

// textParams are searchText's parameters.
func textParams(ns string, q textQuery, k int) map[string]any {
	return map[string]any{"ns": ns, "terms": q.terms, "query": q.lucene(ns), "n": int64(max(candidateFactor*k, 20))}
}

// textHits scores searchText's answer: units, tlen, dfs, cands.
func textHits(q textQuery, v []any, k int) []models.Hit {
	st := textStats{}
	st.units, _ = v[0].(int64)
	st.tlen, _ = v[1].(int64)
	dfs, _ := v[2].([]any)
	for _, d := range dfs {
		n, _ := d.(int64)
		st.df = append(st.df, n)
	}
	rows, _ := v[3].([]any)
	cands := make([]textCandidate, 0, len(rows))
	for _, r := range rows {
		pair, _ := r.([]any)
		if len(pair) != 2 {
			continue
		}
		id, _ := pair[0].(string)
		ts, _ := pair[1].(string)
		cands = append(cands, textCandidate{id: id, terms: strings.Fields(ts)})
	}
	return q.score(st, cands, k)
}

func hitRecords(recs []*neo4j.Record, similarity bool) ([]models.Hit, error) {
	out := make([]models.Hit, 0, len(recs))
	for _, r := range recs {
		id, _ := r.Values[0].(string)
		score, _ := r.Values[1].(float64)
		if similarity {
			score = cosine(score)
		}
		out = append(out, models.Hit{ID: id, Score: score})
	}
	return out, nil
}

// cosine turns Neo4j's cosine similarity score, (1 + cos)/2 in [0, 1], back into the cosine
// the contract (and the embedded store) reports.
func cosine(score float64) float64 { return 2*score - 1 }

const (
	// searchVector asks the vector index for $n candidates over every namespace and keeps
	// this one's; seen tells whether the index had more to give. It reads the namespace's
	// dimension in the same round trip and searches only when the query's matches it. The
	// index keeps full float32 vectors (quantization off), so its scores are the cosine of
	// the stored vectors, as in the embedded store, without reading them again.
	searchVector = `OPTIONAL MATCH (sp:Space {ns: $ns})
		WITH coalesce(sp.dims, 0) AS dims
		CALL (dims) {
			WITH dims WHERE dims = size($vec)
			CALL db.index.vector.queryNodes('` + vectorIndex + `', $n, $vec) YIELD node, score
			RETURN count(*) AS seen, collect(CASE WHEN node.ns = $ns THEN [node.id, score] END) AS hits
		}
		RETURN dims, seen, hits`

	// searchVectorNS is searchVector where the index filters by namespace inside the search
	// (nsVectorIndex): it reads only this namespace's vectors and returns its $n best (or all
	// it has), so one query always answers. $n is the same overfetch as searchVector's
	// first ask, for the same approximate recall and ties settled as the embedded store does.
	searchVectorNS = `CYPHER 25 OPTIONAL MATCH (sp:Space {ns: $ns})
		WITH coalesce(sp.dims, 0) AS dims
		CALL (dims) {
			WITH dims WHERE dims = size($vec)
			MATCH (u:Unit)
			SEARCH u IN (VECTOR INDEX ` + nsVectorIndex + ` FOR $vec WHERE u.ns = $ns LIMIT $n) SCORE AS score
			RETURN collect([u.id, score]) AS hits
		}
		RETURN dims, hits`

	// searchVectorExact scores every unit of the namespace: the fallback when the namespace
	// is a small part of a big index and the approximate search keeps finding others'.
	searchVectorExact = `MATCH (u:Unit {ns: $ns}) WHERE u.embedding IS NOT NULL
		WITH u.id AS id, vector.similarity.cosine(u.embedding, $vec) AS score
		RETURN id, score ORDER BY score DESC, id ASC LIMIT $k`
)

// Candidate counts for the vector index: it is asked for overfetch × k first (at least
// minCandidates), and for growth times more while too few of them are the namespace's, up
// to maxCandidates; past that the namespace is scored exactly.
const (
	overfetch     = 4
	minCandidates = 50
	growth        = 8
)

// maxCandidates is a variable so that a test can reach the exact fallback with a small index.
var maxCandidates = 20000

// SearchVector returns the top k indexed units of ns by cosine similarity to vec, through
// Neo4j's vector index (approximate, HNSW). EINVALID when k < 1, vec is empty or not
// finite, or its dimension differs from the namespace's.
func (s *Store) SearchVector(ctx context.Context, ns string, vec []float32, k int) ([]models.Hit, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	if k < 1 {
		return nil, models.Invalid("k", "k must be at least 1")
	}
	if len(vec) == 0 {
		return nil, models.Invalid("vector", "the query vector is empty")
	}
	q, err := index.Normalize(vec)
	if err != nil {
		return nil, models.Invalid("vector", "the query vector has a NaN or infinite component")
	}
	var hits []models.Hit
	err = s.read(ctx, "search vector", func(tx runner) error {
		params := map[string]any{"ns": ns, "vec": encVector(q), "k": int64(k)}
		if s.nsVectors {
			params["n"] = int64(max(overfetch*k, minCandidates))
			recs, err := collect(ctx, tx, searchVectorNS, params)
			if err != nil {
				return err
			}
			dims, _ := recs[0].Values[0].(int64)
			rows, _ := recs[0].Values[1].([]any)
			if dims != 0 && dims != int64(len(q)) {
				return models.Invalid("vector", "the query vector has %d dimensions; namespace %s uses %d", len(q), ns, dims)
			}
			hits = vectorHits(rows, k)
			return nil
		}
		for n := max(overfetch*k, minCandidates); n <= maxCandidates; n *= growth {
			params["n"] = int64(n)
			recs, err := collect(ctx, tx, searchVector, params)
			if err != nil {
				return err
			}
			dims, _ := recs[0].Values[0].(int64)
			seen, _ := recs[0].Values[1].(int64)
			rows, _ := recs[0].Values[2].([]any)
			switch {
			case dims == 0: // nothing embedded in the namespace yet
				hits = nil
				return nil
			case dims != int64(len(q)):
				return models.Invalid("vector", "the query vector has %d dimensions; namespace %s uses %d", len(q), ns, dims)
			case len(rows) >= k || seen < int64(n):
				hits = vectorHits(rows, k)
				return nil
			}
		}
		recs, err := collect(ctx, tx, searchVectorExact, params)
		if err != nil {
			return err
		}
		hits, err = hitRecords(recs, true)
		return err
	})
	return hits, err
}

// vectorHits turns [id, score] pairs into the k best hits, ties to the smaller id.
func vectorHits(rows []any, k int) []models.Hit {
	out := make([]models.Hit, 0, len(rows))
	for _, r := range rows {
		pair, _ := r.([]any)
		if len(pair) != 2 {
			continue
		}
		id, _ := pair[0].(string)
		score, _ := pair[1].(float64)
		out = append(out, models.Hit{ID: id, Score: cosine(score)})
	}
	return bestHits(out, k)
}

const vectorDims = `MATCH (sp:Space) WHERE sp.dims > 0 RETURN sp.ns AS ns, sp.dims AS dims, coalesce(sp.embedder, '') AS embedder`

// recordEmbedder names the embedder of a namespace whose vectors predate recorded names.
const recordEmbedder = `MATCH (sp:Space {ns: $ns}) WHERE sp.dims = $dims AND coalesce(sp.embedder, '') = ''
	SET sp.lk = NOT coalesce(sp.lk, false), sp.embedder = $embedder`

// Embedders returns the embedder of every namespace that holds vectors: its recorded name
// ("" when the vectors predate recorded names) and size.
func (s *Store) Embedders(ctx context.Context) (map[string]models.EmbedderIdentity, error) {
	out := map[string]models.EmbedderIdentity{}
	err := s.read(ctx, "embedders", func(tx runner) error {
		recs, err := collect(ctx, tx, vectorDims, nil)
		if err != nil {
			return err
		}
		clear(out)
		for _, r := range recs {
			ns, _ := r.Values[0].(string)
			d, _ := r.Values[1].(int64)
			name, _ := r.Values[2].(string)
			out[ns] = models.EmbedderIdentity{Name: name, Dims: int(d)}
		}
		return nil
	})
	return out, err
}

// RecordEmbedder records id as the embedder of ns when ns holds vectors of id's size with no
// recorded name (written before names were recorded); any other namespace is left as it is.
func (s *Store) RecordEmbedder(ctx context.Context, ns string, id models.EmbedderIdentity) error {
	if id.Name == "" || id.Dims <= 0 {
		return models.Invalid("embedder", "an embedder needs a name and a size")
	}
	return s.write(ctx, "record embedder", func(tx neo4j.ManagedTransaction) error {
		return exec(ctx, tx, recordEmbedder, map[string]any{"ns": ns, "dims": int64(id.Dims), "embedder": id.Name})
	})
}

// bestHits sorts hits best first (ties by id, so the order is stable) and keeps the first k.
func bestHits(out []models.Hit, k int) []models.Hit {
	slices.SortFunc(out, func(a, b models.Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out[:min(len(out), k)]
}
