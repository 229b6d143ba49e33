package main

import (
	"testing"
	"time"
)

// TestPercentilesNearestRank: nearest rank over 1..20 ms (p·n rounded up), an observed
// latency, microseconds kept; no latencies give 0.
func TestPercentilesNearestRank(t *testing.T) {
	var lat []time.Duration
	for i := 20; i >= 1; i-- {
		lat = append(lat, time.Duration(i)*time.Millisecond+500*time.Microsecond)
	}
	pct := percentiles(lat)
	for _, tc := range []struct{ p, want float64 }{
		{0, 1.5}, {0.5, 10.5}, {0.9, 18.5}, {0.95, 19.5}, {0.99, 20.5}, {1, 20.5},
	} {
		if got := pct(tc.p); got != tc.want {
			t.Errorf("p%v = %v ms, want %v", tc.p*100, got, tc.want)
		}
	}
	if got := percentiles(nil)(0.95); got != 0 {
		t.Errorf("no latencies: p95 = %v, want 0", got)
	}
}
