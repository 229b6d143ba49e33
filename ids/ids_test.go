package ids

import (
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
)

func TestMemoryOf(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"01M80EQBFMHAM1P1GF4G3Q57V1", "01M80EQBFMHAM1P1GF4G3Q57V1"},
		{"01M80EQBFMHAM1P1GF4G3Q57V1-0", "01M80EQBFMHAM1P1GF4G3Q57V1"},
		{"01M80EQBFMHAM1P1GF4G3Q57V1-12", "01M80EQBFMHAM1P1GF4G3Q57V1"},
		{"-3", "-3"},
		{"c:bees", "c:bees"},
	} {
		if got := MemoryOf(tc.in); got != tc.want {
			t.Errorf("MemoryOf(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestNewOutsideULIDRange: a ULID holds 1970..10889; times outside it used to panic
// ("ulid: time too big") and took a whole ingest batch down with a 500.
func TestNewOutsideULIDRange(t *testing.T) {
	for _, tc := range []struct {
		name   string
		t      time.Time
		wantMS uint64
	}{
		{"1850", time.Date(1850, 3, 1, 0, 0, 0, 0, time.UTC), 0},
		{"one ms before the epoch", time.UnixMilli(-1), 0},
		{"the zero time", time.Time{}, 0},
		{"the epoch", time.UnixMilli(0), 0},
		{"2024", time.Date(2024, 5, 1, 14, 30, 0, 0, time.UTC), 1714573800000},
		{"year 20000", time.Date(20000, 1, 1, 0, 0, 0, 0, time.UTC), ulid.MaxTime()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := New(tc.t)
			u, err := ulid.ParseStrict(id)
			if err != nil {
				t.Fatalf("New(%v) = %q, not a ULID: %v", tc.t, id, err)
			}
			if got := u.Time(); got != tc.wantMS {
				t.Errorf("New(%v) time = %d ms, want %d", tc.t, got, tc.wantMS)
			}
		})
	}
}

// TestNewClampedIDsKeepOrder: ids clamped to the same end still sort in the order made,
// and before every post-1970 id.
func TestNewClampedIDsKeepOrder(t *testing.T) {
	old := time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
	a, b := New(old), New(old.AddDate(-100, 0, 0))
	c := New(time.Date(1970, 1, 1, 0, 0, 1, 0, time.UTC))
	if !(a < b && b < c) {
		t.Errorf("ids %s, %s, %s are not in the order made", a, b, c)
	}
}
