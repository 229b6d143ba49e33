package models

import (
	"math"
	"testing"
	"time"
)

// The stores' one time codec: unix nanoseconds UTC, NoTime for the zero time, and filter
// bounds clamped; the zero time as a bound is NoTime in both stores (Neo4j's copy once
// clamped it to MinInt64+1, so "before the zero time" matched the unset times).
func TestTimeCodec(t *testing.T) {
	at := time.Date(2026, 11, 29, 9, 30, 0, 123, time.FixedZone("x", 3600))
	if n := EncodeTime(at); n != at.UnixNano() || !DecodeTime(n).Equal(at) || DecodeTime(n).Location() != time.UTC {
		t.Errorf("round trip of %v: %d -> %v", at, n, DecodeTime(n))
	}
	if EncodeTime(time.Time{}) != NoTime || !DecodeTime(NoTime).IsZero() {
		t.Errorf("zero time: %d, %v", EncodeTime(time.Time{}), DecodeTime(NoTime))
	}
	epoch := time.Unix(0, 0)
	if EncodeTime(epoch) != 0 || DecodeTime(0).IsZero() {
		t.Errorf("the epoch is a time, not unset: %d, %v", EncodeTime(epoch), DecodeTime(0))
	}
	for _, c := range []struct {
		name string
		t    time.Time
		want int64
	}{
		{"zero: below every stored time", time.Time{}, NoTime},
		{"before 1678: clamped", time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC), math.MinInt64 + 1},
		{"after 2262: clamped", time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC), math.MaxInt64},
		{"in range: as stored", at, at.UnixNano()},
	} {
		if got := FilterTime(c.t); got != c.want {
			t.Errorf("%s: FilterTime = %d, want %d", c.name, got, c.want)
		}
	}
}
