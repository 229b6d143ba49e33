package app

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
)

func TestDefaultMemoryLimit(t *testing.T) {
	const gib = 1 << 30
	for _, tc := range []struct {
		name          string
		total, cgroup int64
		want          int64
	}{
		{"machine only", 24 * gib, 0, 18 * gib},
		{"lower cgroup wins", 24 * gib, 4 * gib, 3 * gib},
		{"higher cgroup ignored", 8 * gib, 64 * gib, 6 * gib},
		{"cgroup only", 0, 2 * gib, 3 * gib / 2},
		{"nothing known", 0, 0, 0},
	} {
		if got := defaultMemoryLimit(tc.total, tc.cgroup); got != tc.want {
			t.Errorf("%s: got %d, want %d", tc.name, got, tc.want)
		}
	}
	if runtime.GOOS == "linux" && memTotal() <= 0 {
		t.Error("memTotal found no MemTotal in /proc/meminfo")
	}
}

func TestResidentBytes(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	// A live process holds at least its own code: more than a megabyte, less than a terabyte.
	if n := ResidentBytes(); n < 1<<20 || n > 1<<40 {
		t.Fatalf("ResidentBytes = %d", n)
	}
}

func TestBudgetMemoryLimit(t *testing.T) {
	const mib, gib = 1 << 20, 1 << 30
	for _, tc := range []struct {
		name            string
		budget, machine int64
		want            int64
	}{
		{"no budget keeps the machine default", 0, 18 * gib, 18 * gib},
		{"no budget, machine unknown", 0, 0, 0},
		{"small budget: 256 MiB allowance", 500 * mib, 18 * gib, 756 * mib},
		{"512 MiB: both allowances agree", 512 * mib, 18 * gib, 768 * mib},
		{"large budget: half again", 4 * gib, 18 * gib, 6 * gib},
		{"never above the machine default", 16 * gib, 18 * gib, 18 * gib},
		{"machine unknown: budget and allowance", 1 * gib, 0, 3 * gib / 2},
		{"no overflow", math.MaxInt64 - 1, 0, math.MaxInt64},
	} {
		if got := budgetMemoryLimit(tc.budget, tc.machine); got != tc.want {
			t.Errorf("%s: budgetMemoryLimit(%d, %d) = %d, want %d", tc.name, tc.budget, tc.machine, got, tc.want)
		}
	}
}

// TestFollowIndexBudget: the limit follows the budget only when GOMEMLIMIT is not set, and
// the returned function puts the previous limit back.
func TestFollowIndexBudget(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if lim, restore := FollowIndexBudget(0, getenv); lim != 0 || debug.SetMemoryLimit(-1) != prev {
		t.Fatalf("no budget: set %d", lim)
	} else {
		restore()
	}
	lim, restore := FollowIndexBudget(500<<20, getenv)
	if lim < 500<<20 || debug.SetMemoryLimit(-1) != lim {
		t.Fatalf("budget 500 MiB: set %d, runtime has %d", lim, debug.SetMemoryLimit(-1))
	}
	restore()
	if got := debug.SetMemoryLimit(-1); got != prev {
		t.Fatalf("restored %d, want %d", got, prev)
	}
	env["GOMEMLIMIT"] = "2GiB"
	if lim, _ := FollowIndexBudget(500<<20, getenv); lim != 0 || debug.SetMemoryLimit(-1) != prev {
		t.Fatalf("GOMEMLIMIT set: set %d", lim)
	}
}
