package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"
)

// TestBenchNamespaces runs issue 10's fourth acceptance at a small scale: 12 namespaces of 30
// memories through a budget that holds a few, every recall the same as with every
// namespace loaded, and the budgeted store never over its budget.
func TestBenchNamespaces(t *testing.T) {
	var out bytes.Buffer
	err := benchNamespaces(context.Background(), []string{"--namespaces", "12", "--memories", "30", "--queries", "120",
		"--index-budget", "600KB", "--writes", "200", "--data", t.TempDir()}, &out, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var got struct {
		Recalls, Same, Loads, Evictions int
		MaxEstimated                    float64 `json:"max_estimated_mb"`
		Budget                          float64 `json:"budget_mb"`
		LiveHeap                        float64 `json:"live_heap_mb"`
		EagerLiveHeap                   float64 `json:"eager_live_heap_mb"`
		MemoryLimit                     float64 `json:"memory_limit_mb"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
		t.Fatalf("last line not JSON: %v\n%s", err, out.String())
	}
	if got.Recalls != 120 || got.Same != 120 || got.Evictions == 0 || got.Loads <= 12 || got.MaxEstimated > got.Budget || got.Budget < 0.585 || got.Budget > 0.587 {
		t.Fatalf("got %+v\n%s", got, out.String())
	}
	// The live heap at the end is reported for both runs, and the budgeted run had the
	// limit a server with that budget gets (600 KB + the 256 MiB allowance) unless
	// GOMEMLIMIT is set.
	wantLimit := 256.586
	if os.Getenv("GOMEMLIMIT") != "" {
		wantLimit = 0
	}
	if !strings.Contains(out.String(), "meanwhile another namespace took ") {
		t.Fatalf("no line for the other namespace's writes (--writes)\n%s", out.String())
	}
	if got.LiveHeap <= 0 || got.EagerLiveHeap <= 0 || math.Abs(got.MemoryLimit-wantLimit) > 0.5 {
		t.Fatalf("live heap %.1f MB (eager %.1f MB), memory limit %.1f MB, want %.0f\n%s", got.LiveHeap, got.EagerLiveHeap, got.MemoryLimit, wantLimit, out.String())
	}
}
