package rerank

import (
	"testing"
	"time"
)

func TestGate(t *testing.T) {
	const ms = time.Millisecond
	for _, tc := range []struct {
		name                         string
		elapsed, p95, margin, budget time.Duration
		force                        bool
		left                         time.Duration
		reason                       string
	}{
		{"room", 5 * ms, 80 * ms, 10 * ms, 100 * ms, false, 85 * ms, ""},
		{"exactly fits", 10 * ms, 80 * ms, 10 * ms, 100 * ms, false, 80 * ms, ""},
		{"one ms over", 11 * ms, 80 * ms, 10 * ms, 100 * ms, false, 0, "elapsed 11.0ms + p95 80.0ms + margin 10.0ms > budget 100.0ms"},
		{"no history", 5 * ms, 0, 10 * ms, 300 * ms, false, 285 * ms, ""},
		{"forced past p95", 11 * ms, 80 * ms, 10 * ms, 100 * ms, true, 79 * ms, ""},
		{"budget spent", 95 * ms, 0, 10 * ms, 100 * ms, true, 0, "no time left: elapsed 95.0ms + margin 10.0ms ≥ budget 100.0ms"},
		{"budget exactly spent", 90 * ms, 0, 10 * ms, 100 * ms, false, 0, "no time left: elapsed 90.0ms + margin 10.0ms ≥ budget 100.0ms"},
	} {
		left, reason := gate(tc.elapsed, tc.p95, tc.margin, tc.budget, tc.force)
		if left != tc.left || reason != tc.reason {
			t.Errorf("%s: gate = %v, %q; want %v, %q", tc.name, left, reason, tc.left, tc.reason)
		}
	}
}

func TestLatenciesP95(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newLatencies(20, time.Minute)
	if p, n := l.p95(t0); p != 0 || n != 0 {
		t.Errorf("empty: %v over %d", p, n)
	}
	// 1..20 ms: the empirical 0.95 quantile is the 19th value, 19 ms (19/20 = 0.95 at or below).
	for i := 20; i >= 1; i-- {
		l.add(t0, time.Duration(i)*time.Millisecond)
	}
	if p, n := l.p95(t0); p != 19*time.Millisecond || n != 20 {
		t.Errorf("1..20ms: p95 %v over %d, want 19ms over 20", p, n)
	}
	// The ring keeps the latest 20: five 100 ms calls replace the five oldest (20..16 ms).
	for i := 0; i < 5; i++ {
		l.add(t0.Add(30*time.Second), 100*time.Millisecond)
	}
	if p, n := l.p95(t0.Add(30 * time.Second)); p != 100*time.Millisecond || n != 20 {
		t.Errorf("after five slow calls: p95 %v over %d, want 100ms over 20", p, n)
	}
	// A minute after t0 only the slow calls are young enough to count.
	if p, n := l.p95(t0.Add(time.Minute)); p != 100*time.Millisecond || n != 5 {
		t.Errorf("a minute later: p95 %v over %d, want 100ms over 5", p, n)
	}
	if p, n := l.p95(t0.Add(2 * time.Minute)); p != 0 || n != 0 {
		t.Errorf("two minutes later: p95 %v over %d, want nothing", p, n)
	}
}

func TestBreakerHalfOpenOneTrial(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := newBreaker(2, 10*time.Second)
	p, ok, _ := b.acquire(t0)
	p2, ok2, _ := b.acquire(t0) // two calls in flight while closed
	if !ok || !ok2 || p.trial || p2.trial {
		t.Fatal("closed breaker refused a call")
	}
	b.done(t0, p, callFailed)
	if b.state(t0) != stateClosed {
		t.Fatal("opened after one failure of two")
	}
	b.done(t0, p2, callFailed)
	if b.state(t0) != stateOpen {
		t.Fatal("not open after two failures")
	}
	half := t0.Add(10 * time.Second)
	if b.state(half) != stateHalfOpen {
		t.Fatalf("state %s after the cooldown, want half-open", b.state(half))
	}
	trial, ok, _ := b.acquire(half)
	if !ok || !trial.trial {
		t.Fatal("half-open breaker refused its trial")
	}
	if _, ok, why := b.acquire(half); ok || why != "circuit half-open: a trial call is in flight" {
		t.Fatalf("second call while the trial is in flight: %v %q", ok, why)
	}
	// The caller of the trial went away: no verdict, the next caller may try.
	b.done(half, trial, callNeutral)
	trial, ok, _ = b.acquire(half)
	if !ok || !trial.trial {
		t.Fatal("no new trial after a neutral one")
	}
	b.done(half, trial, callOK)
	if b.state(half) != stateClosed || b.failures != 0 {
		t.Errorf("after a good trial: %s with %d failures, want closed with 0", b.state(half), b.failures)
	}
}
