package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestBenchNamespaces runs issue 10's fourth acceptance at a small scale: 12 namespaces of 30
// memories through a budget that holds a few, every recall the same as with every
// namespace loaded, and the budgeted store never over its budget.
func TestBenchNamespaces(t *testing.T) {
	var out bytes.Buffer
	err := benchNamespaces(context.Background(), []string{"--namespaces", "12", "--memories", "30", "--queries", "120",
		"--index-budget", "600KB", "--data", t.TempDir()}, &out, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var got struct {
		Recalls, Same, Loads, Evictions int
		MaxEstimated                    float64 `json:"max_estimated_mb"`
		Budget                          float64 `json:"budget_mb"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
		t.Fatalf("last line not JSON: %v\n%s", err, out.String())
	}
	if got.Recalls != 120 || got.Same != 120 || got.Evictions == 0 || got.Loads <= 12 || got.MaxEstimated > got.Budget || got.Budget < 0.585 || got.Budget > 0.587 {
		t.Fatalf("got %+v\n%s", got, out.String())
	}
}
