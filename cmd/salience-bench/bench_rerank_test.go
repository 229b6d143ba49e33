package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// benchRerank runs `salience-bench recall` with the built-in fake rerank endpoint at a small
// scale and returns the figures its last line reports. 100 memories, not fewer: on 50, two
// of the 20 synthetic queries find fewer than two memories, which leaves nothing to rerank
// (status off) and the share at 0.9 with no room for one slow call.
func benchRerank(t *testing.T, fakeLatency string) (share float64, overBudget int, out string) {
	t.Helper()
	var buf bytes.Buffer
	err := benchRecall(context.Background(), []string{"--memories", "100", "--queries", "20",
		"--rerank-fake-latency", fakeLatency, "--budget", "100ms", "--data", t.TempDir()}, &buf, &buf)
	out = buf.String()
	if err != nil {
		t.Fatalf("bench recall --rerank-fake-latency %s: %v\n%s", fakeLatency, err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var got struct {
		Budget     *int     `json:"budget_ms"`
		Share      *float64 `json:"reranked_share"`
		OverBudget *int     `json:"over_budget"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil || got.Budget == nil || got.Share == nil || got.OverBudget == nil {
		t.Fatalf("last line lacks budget_ms, reranked_share or over_budget (%v):\n%s", err, out)
	}
	if *got.Budget != 100 {
		t.Fatalf("budget_ms %d, want 100:\n%s", *got.Budget, out)
	}
	return *got.Share, *got.OverBudget, out
}

// TestBenchRecallRerank is issue 11's second acceptance at a small scale, on the figures the
// benchmark itself reports: a fast endpoint reranks nearly every turn; one slower than the
// budget is skipped by the gate. How far past the budget a turn may run is wall-clock time —
// under the race detector the stages after the rerank (recording the turn) alone took 9 ms —
// so it is logged here, not asserted: the deadline itself is tested on an injected clock in
// package rerank (TestRerankDeadline), and the benchmark's own figure is in docs/benchmarks.md.
func TestBenchRecallRerank(t *testing.T) {
	if share, _, out := benchRerank(t, "1ms"); share < 0.9 {
		t.Errorf("fake latency 1ms, budget 100ms: reranked share %.2f, want ≥ 0.9\n%s", share, out)
	}
	share, over, out := benchRerank(t, "300ms")
	if share > 0.2 {
		t.Errorf("fake latency 300ms, budget 100ms: reranked share %.2f, want the gate to skip nearly every turn\n%s", share, out)
	}
	t.Logf("fake latency 300ms, budget 100ms: %d turns over budget + 5ms", over)
}
