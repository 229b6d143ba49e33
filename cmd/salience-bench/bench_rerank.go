package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/salience-ai/salience/internal/app"
	"github.com/salience-ai/salience/recall"
	"github.com/salience-ai/salience/rerank"
	"github.com/salience-ai/salience/rerank/rerankfake"
)

// benchReranker is the reranking side of `salience-bench recall --rerank-fake-latency D`:
// a fake chat endpoint on loopback that answers after D, the real reranker pointed at it,
// and a count of the statuses the timed calls reported.
type benchReranker struct {
	rr   *rerank.Reranker // nil: the benchmark does not rerank
	stop func()

	mu       sync.Mutex
	statuses map[string]int
	example  map[string]string // the last reason of each status
	over     []overrun         // turns that took longer than the budget + 5 ms
}

// overrun is a turn over the budget, with where its time went.
type overrun struct {
	took   time.Duration
	status string
	stages map[string]float64
}

func newBenchReranker(latency time.Duration) (*benchReranker, error) {
	b := &benchReranker{stop: func() {}, statuses: map[string]int{}, example: map[string]string{}}
	if latency < 0 {
		return b, nil
	}
	url, stop, err := rerankfake.Start(latency)
	if err != nil {
		return nil, err
	}
	rr, err := rerank.New(rerank.Options{BaseURL: url, Default: rerank.PolicyOn})
	if err != nil {
		stop()
		return nil, err
	}
	b.rr, b.stop = rr, stop
	return b, nil
}

func (b *benchReranker) close() { b.stop() }

func (b *benchReranker) reranker() recall.Reranker { return app.RecallReranker(b.rr) }

// mode is the requests' rerank field: auto when reranking, else off so the plain benchmark
// measures retrieval alone.
func (b *benchReranker) mode() string {
	if b.rr == nil {
		return rerank.ModeOff
	}
	return rerank.ModeAuto
}

func (b *benchReranker) count(resp *recall.Response, took, budget time.Duration) {
	if budget == 0 {
		budget = recall.DefaultLatencyBudget
	}
	st := resp.Rerank
	b.mu.Lock()
	defer b.mu.Unlock()
	b.statuses[st.Status]++
	if st.Reason != "" {
		b.example[st.Status] = st.Reason
	}
	if took > budget+5*time.Millisecond {
		b.over = append(b.over, overrun{took: took, status: st.Status, stages: resp.Stages})
	}
}

// report prints the share of each status and returns the JSON fields to add to the
// benchmark's last line.
func (b *benchReranker) report(w io.Writer, budget time.Duration, queries int) string {
	if b.rr == nil {
		return ""
	}
	if budget == 0 {
		budget = recall.DefaultLatencyBudget
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	names := make([]string, 0, len(b.statuses))
	for s := range b.statuses {
		names = append(names, s)
	}
	slices.Sort(names)
	var parts []string
	for _, s := range names {
		p := fmt.Sprintf("%s %.1f%%", s, 100*float64(b.statuses[s])/float64(queries))
		if r := b.example[s]; r != "" {
			p += fmt.Sprintf(" (last: %s)", r)
		}
		parts = append(parts, p)
	}
	share := float64(b.statuses[rerank.StatusApplied]) / float64(queries)
	p95, n := b.rr.P95()
	fmt.Fprintf(w, "rerank (budget %s, call p95 %s over the last %d calls): %s\n", budget, p95.Round(100*time.Microsecond), n, strings.Join(parts, ", "))
	// Where the turns over budget + 5 ms spent their time, slowest first: a rerank stage
	// within the budget and a slow stage around it is the machine, not the gate.
	slices.SortFunc(b.over, func(x, y overrun) int { return int(y.took - x.took) })
	fmt.Fprintf(w, "turns over budget + 5ms: %d\n", len(b.over))
	for _, o := range b.over[:min(len(b.over), 5)] {
		stages := make([]string, 0, len(o.stages))
		for s := range o.stages {
			stages = append(stages, s)
		}
		slices.Sort(stages)
		var desc []string
		for _, s := range stages {
			desc = append(desc, fmt.Sprintf("%s %.1f", s, o.stages[s]))
		}
		fmt.Fprintf(w, "  %.1f ms (%s): %s ms\n", float64(o.took.Microseconds())/1000, o.status, strings.Join(desc, ", "))
	}
	return fmt.Sprintf(`,"budget_ms":%d,"reranked_share":%.4f,"over_budget":%d`, budget.Milliseconds(), share, len(b.over))
}
