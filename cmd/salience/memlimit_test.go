package main

import (
	"runtime"
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
	if n := residentBytes(); n < 1<<20 || n > 1<<40 {
		t.Fatalf("residentBytes = %d", n)
	}
}
