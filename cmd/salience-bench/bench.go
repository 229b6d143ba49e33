package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/salience-ai/salience/eval"
	"github.com/salience-ai/salience/ingest"
	"github.com/salience-ai/salience/internal/app"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/recall"
	"github.com/salience-ai/salience/store/sqlite"
)

// runBench runs `salience-bench recall`: it fills an embedded store with a synthetic corpus
// through the real ingest path (or reuses one), measures the index rebuild of a reopen, then
// server-side recall latency; the last line is JSON.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: salience-bench recall [--memories N] [--queries N] [--concurrency N] [--mode search|ambient] [--data DIR]\n       salience-bench engagement [--events N] [--clients N] [--batch N]\n       salience-bench ann [--vectors N] [--queries N] [--k N] [--cluster-dims N]\n       salience-bench report [--events N] [--days N] [--runs N]\n       salience-bench namespaces [--namespaces N] [--memories N] [--queries N] [--index-budget SIZE] [--data DIR]")
	}
	switch args[0] {
	case "recall":
		return benchRecall(ctx, args[1:], stdout, stderr)
	case "engagement":
		return benchEngagement(ctx, args[1:], stdout, stderr)
	case "ann":
		return benchANN(ctx, args[1:], stdout, stderr)
	case "report":
		return benchReport(ctx, args[1:], stdout, stderr)
	case "namespaces":
		return benchNamespaces(ctx, args[1:], stdout, stderr)
	}
	return fmt.Errorf("bench: unknown benchmark %q (want recall, engagement, ann, report or namespaces)", args[0])
}

func benchRecall(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench recall", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("memories", 100000, "memories in the synthetic corpus")
	others := fs.Int("other-memories", 0, "also keep this many memories of another, unrelated corpus in a second namespace of the store (bench-other), which the timed recalls never ask")
	queries := fs.Int("queries", 1000, "recall calls to time")
	conc := fs.Int("concurrency", 1, "concurrent callers")
	mode := fs.String("mode", "search", "recall mode: search or ambient")
	data := fs.String("data", "", "keep the corpus in this directory and reuse it next time (default: a temporary one); each run's recorded turns stay in it, so compare runs on copies of one fresh corpus")
	ec := app.MeasureEmbedderFlags(fs)
	seed := fs.Uint64("seed", 1, "corpus and query seed")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the timed recall calls to this file")
	memprofile := fs.String("memprofile", "", "write an allocation profile after the timed recall calls to this file")
	rebuildProfile := fs.String("rebuildprofile", "", "write a CPU profile of the timed reopen and index rebuild to this file")
	tracePath := fs.String("trace", "", "write an execution trace of the timed recall calls to this file (go tool trace)")
	blockprofile := fs.String("blockprofile", "", "write a profile of where the timed recall calls waited (locks, channels; 10µs sampling) to this file")
	fakeLatency := fs.Duration("rerank-fake-latency", -1, "rerank every call through a built-in fake chat endpoint on loopback that answers after this long (e.g. 80ms); off when not given")
	budget := fs.Duration("budget", 0, "the requests' latency budget (0 = the default, 300ms)")
	scaling := fs.Int("scaling", 0, "then measure how throughput scales to this many concurrent callers: alternate blocks of calls at concurrency 1 and at this one on the same store, so both meet the machine in the same state, and print each one's qps and their ratio (0 = skip)")
	scalingRounds := fs.Int("scaling-rounds", 6, "--scaling: rounds, each a block at concurrency 1 and one at the other, in alternating order")
	scalingCalls := fs.Int("scaling-calls", 300, "--scaling: calls in each block")
	runs := fs.Int("runs", 1, "time this many runs, each on a fresh copy of the corpus (a reopen, its rebuild and the calls; the copy and its recorded turns discarded after), print each and the median of their figures (sqlite store; not with profiles, a trace or --scaling)")
	sc := app.StoreFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := app.FinishStoreFlags(fs, sc); err != nil {
		return err
	}
	emb, err := app.FinishEmbedderFlags(fs, ec, os.Getenv)
	if err != nil {
		return err
	}
	if *scaling < 0 || (*scaling > 0 && (*scalingRounds < 1 || *scalingCalls < 1)) {
		return errors.New("bench recall: --scaling, --scaling-rounds and --scaling-calls must be positive")
	}
	if *runs < 1 {
		return errors.New("bench recall: --runs must be positive")
	}
	if *runs > 1 && (sc.Kind == app.StoreNeo4j || *scaling > 0 || *cpuprofile != "" || *memprofile != "" ||
		*rebuildProfile != "" || *tracePath != "" || *blockprofile != "") {
		return errors.New("bench recall: --runs above 1 times the sqlite store alone, without profiles, a trace or --scaling")
	}
	dir := *data
	if dir == "" {
		d, err := os.MkdirTemp("", "salience-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	path := filepath.Join(dir, "bench.db")
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	const ns = "bench"
	syn := eval.NewSynth(*seed)

	// open opens the store and loads what it searches with (the Neo4j store keeps its corpus
	// in the database between runs, as --data does for SQLite).
	open := func(path string) (app.AppStore, error) {
		if sc.Kind == app.StoreNeo4j {
			st, _, _, err := app.OpenStore(ctx, sc, "", app.Quiet())
			return st, err
		}
		st, err := sqlite.Open(path, sqlite.Options{IndexBudget: int64(sc.IndexBudget)})
		if err != nil {
			return nil, err
		}
		if err := st.Rebuild(ctx); err != nil {
			st.Close()
			return nil, err
		}
		return st, nil
	}
	st, err := open(path)
	if err != nil {
		return err
	}
	_, have, err := st.FindMemories(ctx, models.MemoryFilter{Namespace: ns, Limit: 1})
	if err == nil {
		err = app.CheckCorpusEmbedder(ctx, st, emb, dir)
	}
	if err != nil {
		st.Close()
		return err
	}
	fill := func(ns string, syn *eval.Synth, have, n int) error {
		if have >= n {
			return nil
		}
		ing := ingest.New(st, emb, ingest.Options{Now: func() time.Time { return now }})
		start := time.Now()
		for i := have; i < n; {
			batch := make([]*models.Memory, 0, 1000)
			for ; i < n && len(batch) < 1000; i++ {
				batch = append(batch, syn.Memory(i, now))
			}
			if _, err := ing.Ingest(ctx, ns, batch); err != nil {
				return err
			}
		}
		el := time.Since(start)
		fmt.Fprintf(stdout, "ingested %d memories into %s in %.1fs (%.0f/s)\n", n-have, ns, el.Seconds(), float64(n-have)/el.Seconds())
		return nil
	}
	err = fill(ns, syn, have, *n)
	if err == nil && *others > 0 {
		const otherNS = "bench-other"
		_, had, ferr := st.FindMemories(ctx, models.MemoryFilter{Namespace: otherNS, Limit: 1})
		if err = ferr; err == nil {
			err = fill(otherNS, eval.NewSynth(*seed+1), had, *others)
		}
	}
	if err != nil {
		st.Close()
		return err
	}
	if err := st.Close(); err != nil {
		return err
	}

	// timeRun reopens the corpus at path (its index rebuild timed) and times the calls; the
	// turns they record go into that database, and the turns' clock into dir.
	timeRun := func(path, dir string) (benchRun, error) {
		if *memprofile != "" {
			// Fine-grained, and from before the rebuild: the profile's in-use space is then the
			// indexes' heap, and the timed calls allocate in small pieces. (A rate set later
			// would scale the rebuild's samples, taken at the default rate, as if taken at this
			// one, and undercount them.)
			runtime.MemProfileRate = 4096
		}
		// The timed rebuild is a server's start: the first store's indexes (gigabytes at a
		// million memories) are collected first, not swept while the second store loads.
		debug.FreeOSMemory()
		stopRebuildProfile, err := startCPUProfile(*rebuildProfile)
		if err != nil {
			return benchRun{}, err
		}
		start := time.Now()
		st, err := open(path)
		if err != nil {
			stopRebuildProfile()
			return benchRun{}, err
		}
		defer st.Close()
		rebuild := time.Since(start)
		stopRebuildProfile()
		debug.FreeOSMemory() // as serve does: collect the rebuild's garbage and return it to the OS
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		rssMB, heapMB := float64(app.ResidentBytes())/(1<<20), float64(ms.HeapInuse)/(1<<20)
		fmt.Fprintf(stdout, "reopened and rebuilt indexes in %.2fs; resident set %.0f MB, heap in use %.0f MB\n", rebuild.Seconds(), rssMB, heapMB)

		rb, err := newBenchReranker(*fakeLatency)
		if err != nil {
			return benchRun{}, err
		}
		defer rb.close()
		p := recall.New(st, emb, recall.Options{Reranker: rb.reranker()})
		// The turns' clock runs on from the corpus's time, as a live server's does, so each
		// turn's ids (ULIDs, made at the request's time) sort above every stored one and
		// recording them needs no lookup. (With one fixed time for every turn, a run whose ids
		// fell in the corpus's millisecond below its random tails looked them up: a record stage
		// of 0.3 ms instead of 0.1.) A kept corpus remembers where the last run's clock stopped.
		clock := newBenchClock(filepath.Join(dir, "bench.clock"), now)
		defer clock.save()
		extra := 0
		if *scaling > 0 {
			extra = 2 * *scalingRounds * *scalingCalls
		}
		qs := make([]string, *queries+50+extra)
		for i := range qs {
			qs[i] = syn.Query()
		}
		var stageMu sync.Mutex
		stageSum := map[string]float64{}                   // the pipeline's own stage timings, summed over the timed calls
		callStages := make([]map[string]float64, *queries) // each timed call's, for the slowest calls' means
		ask := func(i int) (time.Duration, int, error) {
			t := time.Now()
			resp, err := p.Recall(ctx, &recall.Request{
				Namespace: ns, ConversationID: fmt.Sprintf("bench-%d", i%100), Mode: models.Mode(*mode),
				Query: qs[i], Now: clock.now(), Rerank: rb.mode(), LatencyBudget: *budget,
			})
			if err != nil {
				return 0, 0, err
			}
			d := time.Since(t)
			if i < *queries {
				rb.count(resp, d, *budget)
				stageMu.Lock()
				for k, v := range resp.Stages {
					stageSum[k] += v
				}
				callStages[i] = resp.Stages
				stageMu.Unlock()
			}
			return d, len(resp.Results), nil
		}
		for i := 0; i < 50; i++ { // warm-up
			if _, _, err := ask(*queries + i); err != nil {
				return benchRun{}, err
			}
		}
		lat := make([]time.Duration, *queries)
		var results atomic.Int64
		stopProfile, err := startCPUProfile(*cpuprofile)
		if err != nil {
			return benchRun{}, err
		}
		stopTrace, err := startTrace(*tracePath)
		if err != nil {
			return benchRun{}, err
		}
		if *blockprofile != "" {
			runtime.SetBlockProfileRate(int(10 * time.Microsecond))
		}
		trips, counts := st.(interface{ RoundTrips() int64 }) // the Neo4j store counts its round trips
		var trips0 int64
		if counts {
			trips0 = trips.RoundTrips()
		}
		// What the calls cost the Neo4j server, read from its JVM before and after: on one
		// machine it shares the cores with this process, so its CPU bounds the latency too.
		server, serves := st.(interface {
			ServerCPU(context.Context) (time.Duration, error)
		})
		var server0 time.Duration
		if serves {
			if server0, err = server.ServerCPU(ctx); err != nil {
				fmt.Fprintf(stdout, "(the server's CPU time is not readable: %v)\n", err)
				serves = false
			}
		}
		cpu0 := processCPU()
		var mem0, mem1 runtime.MemStats
		runtime.ReadMemStats(&mem0)
		start = time.Now()
		err = benchParallel(*conc, *queries, func(i int) error {
			d, k, err := ask(i)
			lat[i] = d
			results.Add(int64(k))
			return err
		})
		wall := time.Since(start)
		cpu := processCPU() - cpu0
		var serverCPU time.Duration
		if serves && err == nil {
			var server1 time.Duration
			if server1, err = server.ServerCPU(ctx); err != nil {
				return benchRun{}, err
			}
			serverCPU = server1 - server0
		}
		runtime.ReadMemStats(&mem1)
		stopTrace()
		stopProfile()
		if err != nil {
			return benchRun{}, err
		}
		if *blockprofile != "" {
			runtime.SetBlockProfileRate(0)
			if err := writeProfile("block", *blockprofile); err != nil {
				return benchRun{}, err
			}
		}
		if *memprofile != "" {
			f, err := os.Create(*memprofile)
			if err != nil {
				return benchRun{}, err
			}
			defer f.Close()
			runtime.GC() // the profile holds what was allocated up to the last GC
			if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
				return benchRun{}, err
			}
		}
		if is, ok := st.(interface{ IndexStats() sqlite.IndexStats }); ok && sc.IndexBudget > 0 {
			// Budget mode: the namespace loaded at its first use, in the warm-up.
			x := is.IndexStats()
			debug.FreeOSMemory()
			runtime.ReadMemStats(&ms)
			fmt.Fprintf(stdout, "index budget %.0f MB: %d namespaces loaded, estimated %.0f MB (heap in use %.0f MB), %d loads, first use mean %.1f ms, max %.1f ms\n",
				float64(x.Budget)/(1<<20), x.Loaded, float64(x.Bytes)/(1<<20), float64(ms.HeapInuse)/(1<<20), x.Loads, x.LoadMeanMS, x.LoadMaxMS)
		}
		byCall := slices.Clone(lat) // percentiles sorts lat
		pct := percentiles(lat)
		qps := float64(*queries) / wall.Seconds()
		fmt.Fprintf(stdout, "recall (%s store, %s, %d memories, %d queries, concurrency %d): p50 %.2f ms, p95 %.2f ms, p99 %.2f ms, %.0f qps, %.1f results/query\n",
			sc.Kind, *mode, *n, *queries, *conc, pct(0.50), pct(0.95), pct(0.99), qps, float64(results.Load())/float64(*queries))
		stages := slices.Sorted(maps.Keys(stageSum))
		fmt.Fprint(stdout, "stage means:")
		for _, k := range stages {
			fmt.Fprintf(stdout, " %s %.2f ms", k, stageSum[k]/float64(*queries))
		}
		fmt.Fprintln(stdout)
		// Where the tail's time goes: the stage means of the calls at or above p95, beside the
		// time those calls took that no stage accounts for (waiting for a core between stages).
		slow, slowSum, slowLat := 0, map[string]float64{}, 0.0
		for i, d := range byCall {
			took := float64(d.Microseconds()) / 1000 // as percentiles counts it
			if took < pct(0.95) {
				continue
			}
			slow++
			slowLat += took
			for k, v := range callStages[i] {
				slowSum[k] += v
			}
		}
		if slow > 0 {
			fmt.Fprintf(stdout, "slowest 5%% (%d calls, mean %.2f ms) stage means:", slow, slowLat/float64(slow))
			rest := slowLat
			for _, k := range stages {
				fmt.Fprintf(stdout, " %s %.2f ms", k, slowSum[k]/float64(slow))
				rest -= slowSum[k]
			}
			fmt.Fprintf(stdout, ", outside stages %.2f ms\n", rest/float64(slow))
		}
		// The CPU time of the whole process over the timed calls, per call: the pipeline's own
		// work on every core, and what runs beside it in the background (the store folding
		// surfacings and checkpointing, the garbage collector). Less sensitive than
		// latency to a machine's other load, so a change's cost shows in it sooner.
		cpuPerCall := float64(cpu) / float64(time.Millisecond) / float64(*queries)
		fmt.Fprintf(stdout, "process CPU per call: %.2f ms (all threads, background work included)\n", cpuPerCall)
		// Much of the tail is the garbage collector: while it marks the live heap (the
		// indexes and caches), calls lose a core to it and help it in proportion to what
		// they allocate. So what a call allocates, and how often the collector ran.
		allocKB, gcs := float64(mem1.TotalAlloc-mem0.TotalAlloc)/1000/float64(*queries), mem1.NumGC-mem0.NumGC
		fmt.Fprintf(stdout, "allocated per call: %.0f kB (the whole process, background work included); %d garbage collections during the calls\n", allocKB, gcs)
		tripsPerCall := 0.0
		if counts {
			tripsPerCall = float64(trips.RoundTrips()-trips0) / float64(*queries)
			fmt.Fprintf(stdout, "round trips per recall: %.2f (counted at the Neo4j driver)\n", tripsPerCall)
		}
		serverPerCall := float64(serverCPU) / float64(time.Millisecond) / float64(*queries)
		if serves {
			fmt.Fprintf(stdout, "Neo4j server CPU per call: %.2f ms (its whole process, background work included)\n", serverPerCall)
		}
		host := hostCheck() // after the calls, so as not to disturb them
		fmt.Fprintf(stdout, "host, right after: %s\n", host)
		more := rb.report(stdout, *budget, *queries) + fmt.Sprintf(`,"alloc_kb_per_call":%.1f,"gcs":%d`, allocKB, gcs)
		if counts {
			more += fmt.Sprintf(`,"round_trips":%.2f`, tripsPerCall)
		}
		if serves {
			more += fmt.Sprintf(`,"server_cpu_ms_per_call":%.2f`, serverPerCall)
		}
		more += fmt.Sprintf(`,"host_read_gb_s":%.2f,"host_sha256_mb_s":%.0f`, host.ReadGBs, host.SHAMBs)
		if *scaling > 0 {
			first := *queries + 50 // the scaling calls' queries follow the timed ones and the warm-up's
			sc, err := measureScaling(*scaling, *scalingRounds, *scalingCalls, processCPU, func(i int) error {
				_, _, err := ask(first + i)
				return err
			})
			if err != nil {
				return benchRun{}, err
			}
			ceiling := hostScaling(*scaling, 2*(*scalingRounds))
			fmt.Fprintf(stdout, "scaling (%d rounds of %d calls at concurrency 1 and %d, alternating): %.0f qps against %.0f: ×%.2f (rounds ×%.2f–%.2f, median ×%.2f); the host's own ceiling, right after: %d independent SHA-256 loops ×%.2f of one\n",
				*scalingRounds, *scalingCalls, *scaling, sc.qpsN, sc.qps1, sc.ratio, sc.lo, sc.hi, sc.median, *scaling, ceiling)
			// Where the ratio goes: the CPU a call at each concurrency and the cores it kept
			// busy. A ratio short of n with every core busy is CPU a call, not waiting.
			cores := min(*scaling, runtime.GOMAXPROCS(0))
			fmt.Fprintf(stdout, "scaling's CPU: %.2f ms a call at concurrency 1, keeping %.2f cores busy; %.2f ms a call at %d, keeping %.2f of %d busy; at that CPU a call, %d busy cores give at most ×%.2f\n",
				sc.cpu1, sc.busy1, sc.cpuN, *scaling, sc.busyN, cores, cores, sc.bound(cores))
			more += fmt.Sprintf(`,"scaling_qps_1":%.1f,"scaling_qps_n":%.1f,"scaling_ratio":%.3f,"host_scaling_ratio":%.3f,"scaling_cpu_ms_1":%.3f,"scaling_cpu_ms_n":%.3f,"scaling_busy_1":%.2f,"scaling_busy_n":%.2f,"scaling_bound":%.3f`,
				sc.qps1, sc.qpsN, sc.ratio, ceiling, sc.cpu1, sc.cpuN, sc.busy1, sc.busyN, sc.bound(cores))
		}
		return benchRun{P50: pct(0.50), P95: pct(0.95), P99: pct(0.99), QPS: qps, CPU: cpuPerCall, Rebuild: rebuild.Seconds(), RSS: rssMB, Heap: heapMB,
			Host: host,
			json: fmt.Sprintf(`{"p50_ms":%.3f,"p95_ms":%.3f,"p99_ms":%.3f,"qps":%.1f,"cpu_ms_per_call":%.3f,"rebuild_s":%.3f,"rss_mb":%.0f,"heap_mb":%.0f%s}`, pct(0.50), pct(0.95), pct(0.99), qps, cpuPerCall, rebuild.Seconds(), rssMB, heapMB, more)}, nil
	}

	if *runs == 1 {
		res, err := timeRun(path, dir)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, res.json)
		return nil
	}
	var all []benchRun
	for r := range *runs {
		// Beside the corpus, on its file system: /tmp may be memory, and a million-memory
		// corpus is gigabytes.
		copyDir, err := os.MkdirTemp(dir, "run-")
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "run %d of %d, on a copy of the corpus:\n", r+1, *runs)
		res, err := func() (benchRun, error) {
			defer os.RemoveAll(copyDir)
			if err := copyCorpus(dir, copyDir); err != nil {
				return benchRun{}, err
			}
			return timeRun(filepath.Join(copyDir, "bench.db"), copyDir)
		}()
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, res.json)
		all = append(all, res)
	}
	m := medianRun(all)
	each := func(f func(benchRun) float64, format, sep string) string {
		parts := make([]string, len(all))
		for i, r := range all {
			parts[i] = fmt.Sprintf(format, f(r))
		}
		return strings.Join(parts, sep)
	}
	p95 := func(r benchRun) float64 { return r.P95 }
	fmt.Fprintf(stdout, "median of %d runs: p50 %.2f ms, p95 %.2f ms, p99 %.2f ms, %.0f qps, rebuild %.2fs, resident set %.0f MB (each run: p95 %s ms; p99 %s ms; %s qps; rebuild %s s; host read %s GB/s)\n",
		len(all), m.P50, m.P95, m.P99, m.QPS, m.Rebuild, m.RSS, each(p95, "%.2f", " / "),
		each(func(r benchRun) float64 { return r.P99 }, "%.2f", " / "), each(func(r benchRun) float64 { return r.QPS }, "%.0f", " / "),
		each(func(r benchRun) float64 { return r.Rebuild }, "%.2f", " / "), each(func(r benchRun) float64 { return r.Host.ReadGBs }, "%.1f", " / "))
	fmt.Fprintf(stdout, `{"runs":%d,"p50_ms":%.3f,"p95_ms":%.3f,"p99_ms":%.3f,"qps":%.1f,"cpu_ms_per_call":%.3f,"rebuild_s":%.3f,"rss_mb":%.0f,"heap_mb":%.0f,"p95_ms_each":[%s],"host_read_gb_s":%.2f,"host_sha256_mb_s":%.0f}`+"\n",
		len(all), m.P50, m.P95, m.P99, m.QPS, m.CPU, m.Rebuild, m.RSS, m.Heap, each(p95, "%.3f", ","), m.Host.ReadGBs, m.Host.SHAMBs)
	return nil
}

// benchRun is one timed run's figures, and the JSON line that reports it.
type benchRun struct {
	P50, P95, P99, QPS, CPU, Rebuild, RSS, Heap float64
	Host                                        hostState // measured right after the calls
	json                                        string
}

// medianRun is each figure's median over runs (an odd count's middle value, an even one's
// upper middle), taken figure by figure.
func medianRun(runs []benchRun) benchRun {
	med := func(f func(benchRun) float64) float64 {
		v := make([]float64, len(runs))
		for i, r := range runs {
			v[i] = f(r)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	return benchRun{
		P50: med(func(r benchRun) float64 { return r.P50 }), P95: med(func(r benchRun) float64 { return r.P95 }),
		P99: med(func(r benchRun) float64 { return r.P99 }), QPS: med(func(r benchRun) float64 { return r.QPS }),
		CPU: med(func(r benchRun) float64 { return r.CPU }), Rebuild: med(func(r benchRun) float64 { return r.Rebuild }),
		RSS: med(func(r benchRun) float64 { return r.RSS }), Heap: med(func(r benchRun) float64 { return r.Heap }),
		Host: hostState{ReadGBs: med(func(r benchRun) float64 { return r.Host.ReadGBs }), SHAMBs: med(func(r benchRun) float64 { return r.Host.SHAMBs })},
	}
}

// copyCorpus copies the bench's files in src (the closed database, its clock) into dst.
func copyCorpus(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), "bench.") {
			continue
		}
		if err := streamFile(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// streamFile copies src to dst, replacing it, without holding it in memory (a
// million-memory corpus is gigabytes).
func streamFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	// Written back before the run starts, so the kernel is not flushing the copy's dirty
	// pages (gigabytes at a million memories) during the timed rebuild and calls.
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// writeProfile writes the named runtime profile to path.
func writeProfile(name, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// benchClock is the bench's clock for turns: it starts a millisecond after the corpus's time,
// or after where the last run on the same corpus stopped (saved in path), and runs with the
// wall clock.
type benchClock struct {
	path  string
	base  time.Time
	start time.Time
}

func newBenchClock(path string, corpus time.Time) *benchClock {
	c := &benchClock{path: path, base: corpus.Add(time.Millisecond), start: time.Now()}
	if b, err := os.ReadFile(path); err == nil {
		if t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(b))); err == nil && t.After(c.base) {
			c.base = t.Add(time.Millisecond)
		}
	}
	return c
}

// now is the clock's time: safe for concurrent use.
func (c *benchClock) now() time.Time { return c.base.Add(time.Since(c.start)) }

// save keeps where the clock stopped for the next run on the corpus; a failure only means
// the next run's first turns may be looked up.
func (c *benchClock) save() {
	_ = os.WriteFile(c.path, []byte(c.now().Format(time.RFC3339Nano)+"\n"), 0o644)
}
