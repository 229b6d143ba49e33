package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/eval"
	"github.com/salience-ai/salience/internal/app"
)

// benchEngagement runs `salience-bench engagement`: it starts the real server in this
// process on 127.0.0.1:0 over a temporary SQLite store (durable writes, as `serve` runs),
// seeds memories and surfacings through the real HTTP API (ingest, then recall calls), then
// posts engagement batches from several concurrent clients and reports events/s and batch
// latency. The last line is JSON: {"events_per_s":…,"p95_ms":…}.
//
// Each event is the first report on one of the surfacings the recall calls returned (one
// outcome per surfacing: a second report would be a cheap duplicate), with a fixed mix of
// 40 % used, 10 % helpful, 40 % ignored and 10 % dismissed, and no explicit concepts (each
// event takes its surfacing's context, as most bots would report). The batches are encoded
// before the clock starts, so the figure is the server's ingest rate, though client and
// server share this machine's cores.
func benchEngagement(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench engagement", flag.ContinueOnError)
	fs.SetOutput(stderr)
	events := fs.Int("events", 50000, "engagement events to post")
	clients := fs.Int("clients", 8, "concurrent HTTP clients")
	batch := fs.Int("batch", 100, "events per request (at most 1000)")
	memories := fs.Int("memories", 2000, "memories to seed")
	recalls := fs.Int("recalls", 0, "recall calls that create the surfacings (ambient and search alternately); 0 = as many as give one surfacing per event")
	seed := fs.Uint64("seed", 1, "corpus, query and event-mix seed")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the timed part to this file")
	metricsProfile := fs.String("metrics-cpuprofile", "", "write a CPU profile of the metrics read to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case *events < 1, *clients < 1, *memories < 1, *recalls < 0:
		return errors.New("bench engagement: --events, --clients and --memories must be positive, --recalls not negative")
	case *batch < 1 || *batch > 1000:
		return errors.New("bench engagement: --batch must be from 1 to 1000")
	}

	dir, err := os.MkdirTemp("", "salience-bench-engagement-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	srv := app.NewMain()
	srv.Stdout, srv.Stderr = io.Discard, io.Discard
	srv.Getenv = func(string) string { return "" } // the bench's server ignores SALIENCE_* settings
	if err := srv.ParseFlags(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data", dir, "--log-level", "error"}); err != nil {
		return err
	}
	if err := srv.Run(ctx); err != nil {
		return err
	}
	defer srv.Close()
	base := "http://" + srv.Addr() + "/v1/namespaces/bench"
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 4 * *clients, MaxIdleConnsPerHost: 4 * *clients}}
	if err := benchWaitReady(ctx, client, "http://"+srv.Addr()+"/readyz"); err != nil {
		return err
	}

	// Seed through the API: memories, then recall calls whose results are the surfacings.
	start := time.Now()
	now := time.Now().UTC()
	syn := eval.NewSynth(*seed)
	for i := 0; i < *memories; {
		var req api.CreateMemoriesRequest
		for ; i < *memories && len(req.Memories) < 500; i++ {
			m := syn.Memory(i, now)
			req.Memories = append(req.Memories, api.MemoryInput{Kind: string(m.Kind), Content: m.Content, CreatedAt: m.CreatedAt,
				Source: &api.Source{ConversationID: m.Source.ConversationID, Speaker: m.Source.Speaker}})
		}
		if err := benchPostJSON(ctx, client, base+"/memories", req, http.StatusCreated, nil); err != nil {
			return fmt.Errorf("seeding memories: %w", err)
		}
	}
	var (
		mu    sync.Mutex
		sids  []string
		calls int
	)
	// Rounds of recall calls until there are --recalls calls or, by default, a surfacing per
	// event; a bound on the rounds stops a corpus that surfaces too little.
	for round := 0; round < 100; round++ {
		n := 1000
		switch {
		case *recalls > 0:
			n = *recalls - calls
		case len(sids) >= *events:
			n = 0
		}
		if n <= 0 {
			break
		}
		queries := make([]api.RecallRequest, n)
		for i := range queries {
			mode := "search"
			if (calls+i)%2 == 0 {
				mode = "ambient"
			}
			queries[i] = api.RecallRequest{ConversationID: fmt.Sprintf("conv-%d", (calls+i)%50), Mode: mode, Query: syn.Query(), Limit: 10, Rerank: "off"}
		}
		err = benchParallel(*clients, len(queries), func(i int) error {
			var resp api.RecallResponse
			if err := benchPostJSON(ctx, client, base+"/recall", queries[i], http.StatusOK, &resp); err != nil {
				return fmt.Errorf("seeding surfacings: %w", err)
			}
			mu.Lock()
			for _, r := range resp.Results {
				sids = append(sids, r.SurfacingID)
			}
			mu.Unlock()
			return nil
		})
		if err != nil {
			return err
		}
		calls += n
	}
	if len(sids) < *events {
		return fmt.Errorf("bench engagement: %d recall calls surfaced %d memories, fewer than the %d events (one outcome per surfacing); raise --recalls or lower --events",
			calls, len(sids), *events)
	}
	slices.Sort(sids) // the event plan does not depend on the order the calls finished in
	fmt.Fprintf(stdout, "seeded %d memories and %d surfacings (%d recall calls) over HTTP in %.1fs\n",
		*memories, len(sids), calls, time.Since(start).Seconds())

	// Encode every batch before the clock starts.
	rng := rand.New(rand.NewPCG(*seed, 0xe4))
	var bodies [][]byte
	for i := 0; i < *events; {
		var req api.EngagementRequest
		for ; i < *events && len(req.Events) < *batch; i++ {
			req.Events = append(req.Events, api.EngagementEvent{ID: fmt.Sprintf("ev-%d", i), SurfacingID: sids[i], Type: eventMix(rng)})
		}
		b, err := json.Marshal(req)
		if err != nil {
			return err
		}
		bodies = append(bodies, b)
	}

	stopProfile, err := startCPUProfile(*cpuprofile)
	if err != nil {
		return err
	}
	lat := make([]time.Duration, len(bodies))
	var applied, duplicates, rejected atomic.Int64
	start = time.Now()
	err = benchParallel(*clients, len(bodies), func(i int) error {
		t := time.Now()
		var resp struct{ Applied, Duplicates, Rejected int }
		if err := benchPostRaw(ctx, client, base+"/engagement", bodies[i], http.StatusOK, &resp); err != nil {
			return fmt.Errorf("engagement batch %d: %w", i, err)
		}
		lat[i] = time.Since(t)
		applied.Add(int64(resp.Applied))
		duplicates.Add(int64(resp.Duplicates))
		rejected.Add(int64(resp.Rejected))
		return nil
	})
	wall := time.Since(start)
	stopProfile() // the profile is of the timed part only, not of the metrics read below
	if err != nil {
		return err
	}
	pct := percentiles(lat)
	perSec := float64(*events) / wall.Seconds()
	fmt.Fprintf(stdout, "engagement: %d events in %d batches of %d from %d clients over HTTP in %.2fs: %.0f events/s; "+
		"batch latency p50 %.2f ms, p95 %.2f ms, p99 %.2f ms; applied %d, duplicates %d, rejected %d\n",
		*events, len(bodies), *batch, *clients, wall.Seconds(), perSec, pct(0.50), pct(0.95), pct(0.99),
		applied.Load(), duplicates.Load(), rejected.Load())
	if applied.Load() != int64(*events) {
		return fmt.Errorf("bench engagement: %d of %d events applied, %d duplicates, %d rejected", applied.Load(), *events, duplicates.Load(), rejected.Load())
	}

	// The log holds every event: read it back through the metrics route.
	var m api.MetricsResponse
	stopProfile, err = startCPUProfile(*metricsProfile)
	if err != nil {
		return err
	}
	t := time.Now()
	err = benchGetJSON(ctx, client, base+"/metrics", &m)
	stopProfile()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "metrics read in %.2fs; graph %d nodes, %d edges, %d communities\n", time.Since(t).Seconds(), m.Graph.Nodes, m.Graph.Edges, m.Graph.Communities)
	if m.Events.Total != *events {
		return fmt.Errorf("bench engagement: the metrics count %d events, want %d", m.Events.Total, *events)
	}
	fmt.Fprintf(stdout, "metrics: %d events logged; precision %.3f, dismissal rate %.3f over %d surfacings\n",
		m.Events.Total, m.Overall.Precision, m.Overall.DismissalRate, m.Overall.Surfaced)
	fmt.Fprintf(stdout, `{"events_per_s":%.1f,"p95_ms":%.3f}`+"\n", perSec, pct(0.95))
	return nil
}

// eventMix draws an event type: 40 % used, 10 % helpful, 40 % ignored, 10 % dismissed.
func eventMix(rng *rand.Rand) string {
	switch r := rng.IntN(10); {
	case r < 4:
		return "used"
	case r < 5:
		return "helpful"
	case r < 9:
		return "ignored"
	}
	return "dismissed"
}

// benchParallel runs fn(0..n-1) on workers goroutines and returns the first error.
func benchParallel(workers, n int, fn func(i int) error) error {
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					errOnce.Do(func() { firstErr = err })
					next.Store(int64(n)) // stop handing out work
					return
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// benchWaitReady polls /readyz until the store's indexes are loaded.
func benchWaitReady(ctx context.Context, client *http.Client, url string) error {
	deadline := time.Now().Add(time.Minute)
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		res, err := client.Do(req)
		if err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the server was not ready within a minute (last error %v)", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func benchPostJSON(ctx context.Context, client *http.Client, url string, in any, status int, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return benchPostRaw(ctx, client, url, b, status, out)
}

// benchPostRaw posts body and decodes the answer into out (may be nil) when it has the status
// expected; any other status is an error carrying the body.
func benchPostRaw(ctx context.Context, client *http.Client, url string, body []byte, status int, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	return benchDo(client, req, status, out)
}

func benchGetJSON(ctx context.Context, client *http.Client, url string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	return benchDo(client, req, http.StatusOK, out)
}

func benchDo(client *http.Client, req *http.Request, status int, out any) error {
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode != status {
		return fmt.Errorf("%s %s: %d %s", req.Method, req.URL.Path, res.StatusCode, bytes.TrimSpace(b))
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}
