package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestBenchClock: the turns' clock starts after the corpus's time, runs forward, and a second
// run on the same corpus starts after where the first stopped, so every run's turn ids sort
// above the earlier ones.
func TestBenchClock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bench.clock")
	corpus := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	c := newBenchClock(path, corpus)
	first := c.now()
	if !first.After(corpus) {
		t.Fatalf("first turn at %v, not after the corpus's %v", first, corpus)
	}
	time.Sleep(2 * time.Millisecond)
	if later := c.now(); !later.After(first) {
		t.Fatalf("the clock did not run: %v then %v", first, later)
	}
	c.save()
	stopped := c.now()
	d := newBenchClock(path, corpus)
	if next := d.now(); !next.After(stopped) {
		t.Fatalf("second run starts at %v, not after the first run's stop at %v", next, stopped)
	}
	// A corrupt file is ignored: the clock starts after the corpus.
	if err := os.WriteFile(path, []byte("not a time"), 0o644); err != nil {
		t.Fatal(err)
	}
	if e := newBenchClock(path, corpus); e.base != corpus.Add(time.Millisecond) {
		t.Fatalf("corrupt clock file: base %v", e.base)
	}
}
