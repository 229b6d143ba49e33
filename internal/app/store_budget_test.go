package app

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/salience-ai/salience/store/sqlite"
)

func TestByteSize(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "1048576": 1 << 20, "500MB": 500 << 20, "2gb": 2 << 30, " 3 KB ": 3 << 10, "7B": 7} {
		var b ByteSize
		if err := b.Set(in); err != nil || int64(b) != want {
			t.Errorf("Set(%q) = %d, %v; want %d", in, b, err, want)
		}
	}
	for _, in := range []string{"", "MB", "-1MB", "1.5GB", "12TB", "9999999999GB"} {
		var b ByteSize
		if err := b.Set(in); err == nil {
			t.Errorf("Set(%q) accepted: %d", in, b)
		}
	}
}

// TestIndexCollectors: a store with a budget reports it and its loads at /metrics.
func TestIndexCollectors(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "salience.db"), sqlite.Options{Logger: Quiet(), IndexBudget: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	if err := st.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.GraphStats(ctx, "alpha"); err != nil { // first use: a load
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(indexCollectors(st)...)
	want := `
# HELP salience_index_budget_bytes The in-memory index budget (--index-budget); 0: every namespace loaded at start.
# TYPE salience_index_budget_bytes gauge
salience_index_budget_bytes 6.7108864e+07
# HELP salience_index_loads_total Namespaces loaded on first use (or again after eviction).
# TYPE salience_index_loads_total counter
salience_index_loads_total 1
# HELP salience_index_namespaces_loaded Namespaces whose indexes are in memory.
# TYPE salience_index_namespaces_loaded gauge
salience_index_namespaces_loaded 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "salience_index_budget_bytes", "salience_index_loads_total", "salience_index_namespaces_loaded"); err != nil {
		t.Fatal(err)
	}
}
