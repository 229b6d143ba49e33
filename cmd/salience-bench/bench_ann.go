package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"time"

	"github.com/salience-ai/salience/eval"
	"github.com/salience-ai/salience/index"
	"github.com/salience-ai/salience/internal/app"
)

const benchANNHelp = `salience-bench ann: recall@k of the approximate vector search (a scan of 4-bit codes, the
best rescored by int8 codes; what a namespace of index.ApproxMinRows or more memories uses)
against an exact float32 scan, and the latency of both, on two corpora:

  synth   the LoCoMo-shaped synthetic corpus (eval.Synth, as bench recall uses): each memory's
          content embedded by serve's embedder (--embedder and --embed-*, with serve's
          defaults); queries are eval.Synth queries, embedded the same way.
  cluster --cluster-dims-dimensional vectors (default 1,536, an OpenAI embedding's size) with
          clustered structure: --clusters centres drawn from a standard normal distribution,
          each vector a random centre plus independent normal noise of standard deviation
          --spread per component relative to the centre's (so spread 1 puts a vector as far
          from its centre as the centre is from the origin); queries are drawn the same way.

Every query asks for k hits from an index of --vectors vectors; recall@k is the share of the
exact top k the approximate search also returns, averaged over --queries queries.`

// benchANN runs `salience-bench ann`; the last line is JSON.
func benchANN(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench ann", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, benchANNHelp); fs.PrintDefaults() }
	n := fs.Int("vectors", 100000, "vectors in each index")
	queries := fs.Int("queries", 200, "queries per corpus")
	k := fs.Int("k", 20, "hits per query")
	rescore := fs.Int("rescore", 0, "rows rescored by their int8 codes (0 = what Search uses: index.Rescore(k))")
	ec := app.MeasureEmbedderFlags(fs)
	cdims := fs.Int("cluster-dims", 1536, "dimensions of the cluster corpus (0 = skip it)")
	clusters := fs.Int("clusters", 1000, "clusters in the cluster corpus")
	spread := fs.Float64("spread", 1, "noise around a cluster centre, relative to the centre (see the help)")
	seed := fs.Uint64("seed", 1, "corpus and query seed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	emb, err := app.FinishEmbedderFlags(fs, ec, os.Getenv)
	if err != nil {
		return err
	}
	if *n <= 0 || *queries <= 0 || *k <= 0 {
		return errors.New("bench ann: --vectors, --queries and --k must be positive")
	}
	rs := *rescore
	if rs <= 0 {
		rs = index.Rescore(*k)
	}
	type result struct {
		Corpus    string  `json:"corpus"`
		Vectors   int     `json:"vectors"`
		Dims      int     `json:"dims"`
		K         int     `json:"k"`
		Rescore   int     `json:"rescore"`
		Recall    float64 `json:"recall_at_k"`
		ExactMs   float64 `json:"exact_mean_ms"`
		ApproxMs  float64 `json:"approx_mean_ms"`
		ApproxP95 float64 `json:"approx_p95_ms"`
	}
	var results []result
	// Each corpus goes into the index recall uses (v, coded from ApproxMinRows rows on) and
	// into an exact float32 one (ref), the reference.
	measure := func(name string, v, ref *index.Vectors, qs [][]float32) error {
		var hit, total int
		var exact, approx time.Duration
		lat := make([]time.Duration, 0, len(qs))
		for _, q := range qs {
			if err := ctx.Err(); err != nil {
				return err
			}
			t0 := time.Now()
			want := ref.SearchExact(q, *k)
			t1 := time.Now()
			got := v.SearchApprox(q, *k, rs)
			t2 := time.Now()
			exact += t1.Sub(t0)
			approx += t2.Sub(t1)
			lat = append(lat, t2.Sub(t1))
			in := map[string]bool{}
			for _, h := range got {
				in[h.ID] = true
			}
			for _, h := range want {
				if in[h.ID] {
					hit++
				}
			}
			total += len(want)
		}
		r := result{Corpus: name, Vectors: v.Len(), Dims: v.Dims(), K: *k, Rescore: rs,
			Recall:   float64(hit) / float64(max(total, 1)),
			ExactMs:  float64(exact.Microseconds()) / 1000 / float64(len(qs)),
			ApproxMs: float64(approx.Microseconds()) / 1000 / float64(len(qs)),
		}
		r.ApproxP95 = percentiles(lat)(0.95)
		results = append(results, r)
		fmt.Fprintf(stdout, "%-7s %d×%d: recall@%d %.4f (rescore %d); mean exact %.2f ms, approx %.2f ms (p95 %.2f ms)\n",
			name, r.Vectors, r.Dims, r.K, r.Recall, rs, r.ExactMs, r.ApproxMs, r.ApproxP95)
		return nil
	}

	// The synth corpus.
	syn := eval.NewSynth(*seed)
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	v, ref := index.NewVectors(emb.Dims()), index.NewExactVectors(emb.Dims())
	v.Grow(*n)
	ref.Grow(*n)
	for i := 0; i < *n; i++ {
		m := syn.Memory(i, now)
		vecs, err := emb.Embed(ctx, []string{m.Content})
		if err != nil {
			return err
		}
		if err := v.Add(m.ID+fmt.Sprint(i), vecs[0]); err != nil {
			return err
		}
		if err := ref.Add(m.ID+fmt.Sprint(i), vecs[0]); err != nil {
			return err
		}
	}
	qs := make([][]float32, 0, *queries)
	for len(qs) < *queries {
		vecs, err := emb.Embed(ctx, []string{syn.Query()})
		if err != nil {
			return err
		}
		if !zeroVec(vecs[0]) {
			qs = append(qs, vecs[0])
		}
	}
	if err := measure("synth", v, ref, qs); err != nil {
		return err
	}
	v, ref = nil, nil

	if *cdims > 0 {
		r := rand.New(rand.NewPCG(*seed, 1536))
		centres := make([][]float32, max(*clusters, 1))
		for i := range centres {
			centres[i] = normalVec(r, *cdims, nil, 1)
		}
		draw := func() []float32 { return normalVec(r, *cdims, centres[r.IntN(len(centres))], *spread) }
		cv, cref := index.NewVectors(*cdims), index.NewExactVectors(*cdims)
		cv.Grow(*n)
		cref.Grow(*n)
		for i := 0; i < *n; i++ {
			vec := draw()
			if err := cv.Add(fmt.Sprintf("c%07d", i), vec); err != nil {
				return err
			}
			if err := cref.Add(fmt.Sprintf("c%07d", i), vec); err != nil {
				return err
			}
		}
		cq := make([][]float32, *queries)
		for i := range cq {
			cq[i] = draw()
		}
		if err := measure("cluster", cv, cref, cq); err != nil {
			return err
		}
	}
	b, err := json.Marshal(results)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, string(b))
	return nil
}

// normalVec returns centre + spread·N(0, I) (centre nil: the origin).
func normalVec(r *rand.Rand, dims int, centre []float32, spread float64) []float32 {
	out := make([]float32, dims)
	for i := range out {
		x := spread * r.NormFloat64()
		if centre != nil {
			x += float64(centre[i])
		}
		out[i] = float32(x)
	}
	return out
}

func zeroVec(v []float32) bool {
	var s float64
	for _, x := range v {
		s += math.Abs(float64(x))
	}
	return s == 0
}
