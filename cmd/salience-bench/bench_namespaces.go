package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"time"

	"github.com/salience-ai/salience/embed"
	"github.com/salience-ai/salience/eval"
	"github.com/salience-ai/salience/ingest"
	"github.com/salience-ai/salience/internal/app"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/recall"
	"github.com/salience-ai/salience/store/sqlite"
)

// benchNamespaces runs `salience-bench namespaces`, issue 10's fourth acceptance: many
// namespaces served under an index budget. It fills a corpus of --namespaces namespaces of
// --memories each (kept under --data), then replays one seeded sequence of recalls, each
// in a namespace drawn at random, twice on copies of the corpus: once with --index-budget,
// then once with every namespace loaded at start. It reports whether every recall returned the
// same memories in the same order, the most the budgeted store held (estimated, and the
// heap), what each run holds at the end (the live heap after a forced collection — the
// indexes actually held — and the resident set), first-use latency, and both runs'
// latencies; the last line is JSON. The budgeted run has the soft memory limit a server with
// that budget would have (app.FollowIndexBudget) unless GOMEMLIMIT is set.
func benchNamespaces(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench namespaces", flag.ContinueOnError)
	fs.SetOutput(stderr)
	spaces := fs.Int("namespaces", 2000, "namespaces in the corpus")
	per := fs.Int("memories", 500, "memories in each namespace")
	queries := fs.Int("queries", 4000, "recalls to replay, each in a random namespace")
	data := fs.String("data", "", "keep the corpus in this directory and reuse it next time (default: a temporary one)")
	seed := fs.Uint64("seed", 1, "corpus and query seed")
	writes := fs.Int("writes", 0, "memories a second ingested into another namespace during the budgeted replay (its first uses must not wait for them, nor they for the loads)")
	var budget app.ByteSize = 500 << 20
	fs.Var(&budget, "index-budget", "the budgeted run's index budget (e.g. 500MB)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *spaces < 1 || *per < 1 || *queries < 1 || budget <= 0 {
		return fmt.Errorf("bench namespaces: --namespaces, --memories, --queries and --index-budget must be positive")
	}
	if *writes < 0 || *writes > 10_000 {
		return fmt.Errorf("bench namespaces: --writes must be between 0 and 10000")
	}
	dir := *data
	if dir == "" {
		d, err := os.MkdirTemp("", "salience-bench-ns-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	base := filepath.Join(dir, fmt.Sprintf("namespaces-%dx%d.db", *spaces, *per))
	emb := embed.NewLocal(0)
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	nsName := func(i int) string { return fmt.Sprintf("ns%05d", i) }
	if err := fillNamespaces(ctx, base, emb, now, *seed, *spaces, *per, nsName, stdout); err != nil {
		return err
	}

	syn := eval.NewSynth(*seed + 1)
	rng := rand.New(rand.NewPCG(*seed, 77))
	type ask struct {
		ns, query string
		conv      int
	}
	seq := make([]ask, *queries)
	for i := range seq {
		seq[i] = ask{ns: nsName(rng.IntN(*spaces)), query: syn.Query(), conv: rng.IntN(50)}
	}
	type run struct {
		results   [][]string
		lat       []time.Duration
		maxBytes  int64
		maxHeapMB float64
		stats     sqlite.IndexStats
		rssMB     float64
		liveMB    float64         // heap after a forced collection at the end
		goMB      float64         // then, what the Go runtime holds from the OS (the rest of the resident set is SQLite's and the code)
		limitMB   float64         // the soft memory limit set for the run; 0: the process's default
		writeLat  []time.Duration // the other namespace's writes (--writes)
	}
	replay := func(name string, b int64) (*run, error) {
		path := filepath.Join(dir, name+".db")
		if err := streamFile(base, path); err != nil { // a closed database: its WAL checkpointed by Close
			return nil, err
		}
		defer os.Remove(path)
		defer os.Remove(path + "-wal")
		defer os.Remove(path + "-shm")
		st, err := sqlite.Open(path, sqlite.Options{Logger: app.Quiet(), IndexBudget: b})
		if err != nil {
			return nil, err
		}
		defer st.Close()
		if err := st.Rebuild(ctx); err != nil {
			return nil, err
		}
		p := recall.New(st, emb, recall.Options{})
		r := &run{results: make([][]string, len(seq)), lat: make([]time.Duration, len(seq))}
		if *writes > 0 && b > 0 {
			// Another namespace takes --writes memories a second through the ingest path
			// while the replay loads and evicts the others.
			wctx, stop := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				ing := ingest.New(st, emb, ingest.Options{Now: func() time.Time { return now }})
				syn := eval.NewSynth(*seed + 2)
				tick := time.NewTicker(time.Second / time.Duration(*writes))
				defer tick.Stop()
				for i := 0; ; i++ {
					select {
					case <-wctx.Done():
						done <- nil
						return
					case <-tick.C:
					}
					t := time.Now()
					if _, err := ing.Ingest(wctx, "writer", []*models.Memory{syn.Memory(i, now)}); err != nil && wctx.Err() == nil {
						done <- err
						return
					}
					r.writeLat = append(r.writeLat, time.Since(t))
				}
			}()
			defer func() {
				stop()
				<-done
			}()
		}
		lim, restore := app.FollowIndexBudget(b, os.Getenv)
		defer restore()
		r.limitMB = float64(lim) / (1 << 20)
		var ms runtime.MemStats
		for i, a := range seq {
			t := time.Now()
			resp, err := p.Recall(ctx, &recall.Request{Namespace: a.ns, ConversationID: fmt.Sprintf("c%d", a.conv),
				Mode: models.ModeSearch, Query: a.query, Now: now})
			if err != nil {
				return nil, err
			}
			r.lat[i] = time.Since(t)
			for _, res := range resp.Results {
				r.results[i] = append(r.results[i], res.Memory.ID)
			}
			if x := st.IndexStats(); x.Bytes > r.maxBytes {
				r.maxBytes = x.Bytes
			}
			if i%200 == 199 || i == len(seq)-1 {
				runtime.ReadMemStats(&ms)
				r.maxHeapMB = max(r.maxHeapMB, float64(ms.HeapInuse)/(1<<20))
			}
		}
		r.stats = st.IndexStats()
		// Two collections (FreeOSMemory runs the second): sync.Pool's victim cache — the
		// indexes' search scratch — outlives one.
		runtime.GC()
		debug.FreeOSMemory()
		runtime.ReadMemStats(&ms)
		r.liveMB = float64(ms.HeapAlloc) / (1 << 20)
		r.goMB = float64(ms.Sys-ms.HeapReleased) / (1 << 20)
		r.rssMB = float64(app.ResidentBytes()) / (1 << 20)
		runtime.KeepAlive(st)
		return r, nil
	}
	// The budgeted run goes first, as a server with that budget would start. Run after the
	// fully loaded one, it inherited that run's memory the runtime does not return (2,000 ×
	// 500 memories: Go runtime 1,059 MB and resident set 1,111 MB for a 505 MB live heap;
	// first, 603 and 672 MB for 498).
	lazy, err := replay("budget", int64(budget))
	if err != nil {
		return err
	}
	runtime.GC()
	eager, err := replay("eager", 0)
	if err != nil {
		return err
	}
	same := 0
	for i := range seq {
		if slices.Equal(eager.results[i], lazy.results[i]) {
			same++
		}
	}
	pe, pl := percentiles(eager.lat), percentiles(lazy.lat)
	limit := "GOMEMLIMIT as set"
	if lazy.limitMB > 0 {
		limit = fmt.Sprintf("memory limit %.0f MB", lazy.limitMB)
	}
	fmt.Fprintf(stdout, "every namespace loaded: p50 %.2f ms, p95 %.2f ms, p99 %.2f ms; heap in use up to %.0f MB; at the end live heap %.0f MB, Go runtime %.0f MB, resident set %.0f MB\n",
		pe(0.50), pe(0.95), pe(0.99), eager.maxHeapMB, eager.liveMB, eager.goMB, eager.rssMB)
	fmt.Fprintf(stdout, "index budget %.0f MB (%s): estimated up to %.0f MB (heap in use up to %.0f MB); at the end estimated %.0f MB, live heap %.0f MB, Go runtime %.0f MB, resident set %.0f MB; %d loads, %d evictions, first use mean %.1f ms, max %.1f ms; p50 %.2f ms, p95 %.2f ms, p99 %.2f ms\n",
		float64(budget)/(1<<20), limit, float64(lazy.maxBytes)/(1<<20), lazy.maxHeapMB, float64(lazy.stats.Bytes)/(1<<20), lazy.liveMB, lazy.goMB, lazy.rssMB,
		lazy.stats.Loads, lazy.stats.Evictions, lazy.stats.LoadMeanMS, lazy.stats.LoadMaxMS, pl(0.50), pl(0.95), pl(0.99))
	if len(lazy.writeLat) > 0 {
		pw := percentiles(lazy.writeLat)
		fmt.Fprintf(stdout, "meanwhile another namespace took %d writes (%d a second): p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
			len(lazy.writeLat), *writes, pw(0.50), pw(0.99), pw(1))
	}
	fmt.Fprintf(stdout, "same results: %d of %d recalls\n", same, len(seq))
	fmt.Fprintf(stdout, `{"recalls":%d,"same":%d,"budget_mb":%.3f,"max_estimated_mb":%.3f,"max_heap_mb":%.0f,"eager_max_heap_mb":%.0f,"live_heap_mb":%.1f,"eager_live_heap_mb":%.1f,"rss_mb":%.0f,"eager_rss_mb":%.0f,"memory_limit_mb":%.1f,"loads":%d,"evictions":%d,"first_use_mean_ms":%.2f,"first_use_max_ms":%.2f,"p95_ms":%.3f,"eager_p95_ms":%.3f}`+"\n",
		len(seq), same, float64(budget)/(1<<20), float64(lazy.maxBytes)/(1<<20), lazy.maxHeapMB, eager.maxHeapMB,
		lazy.liveMB, eager.liveMB, lazy.rssMB, eager.rssMB, lazy.limitMB, lazy.stats.Loads, lazy.stats.Evictions,
		lazy.stats.LoadMeanMS, lazy.stats.LoadMaxMS, pl(0.95), pe(0.95))
	if same != len(seq) {
		return fmt.Errorf("bench namespaces: %d of %d recalls differ between the budgeted and the fully loaded store", len(seq)-same, len(seq))
	}
	return nil
}

// fillNamespaces builds the corpus at path unless it exists: per namespace, memories of the
// synthetic corpus through the real ingest path.
func fillNamespaces(ctx context.Context, path string, emb embed.Embedder, now time.Time, seed uint64, spaces, per int, nsName func(int) string, stdout io.Writer) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	tmp := path + ".building"
	os.Remove(tmp)
	st, err := sqlite.Open(tmp, sqlite.Options{Logger: app.Quiet()})
	if err != nil {
		return err
	}
	if err := st.Rebuild(ctx); err != nil {
		st.Close()
		return err
	}
	syn := eval.NewSynth(seed)
	ing := ingest.New(st, emb, ingest.Options{Now: func() time.Time { return now }})
	start := time.Now()
	for n := range spaces {
		batch := make([]*models.Memory, 0, per)
		for i := range per {
			batch = append(batch, syn.Memory(i, now))
		}
		if _, err := ing.Ingest(ctx, nsName(n), batch); err != nil {
			st.Close()
			return err
		}
	}
	if err := st.Close(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "ingested %d namespaces of %d memories in %.1fs\n", spaces, per, time.Since(start).Seconds())
	return os.Rename(tmp, path)
}
