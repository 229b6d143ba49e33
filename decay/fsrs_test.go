package decay

import (
	"math"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

var t0 = time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)

func near(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol || got != got {
		t.Errorf("%s = %.9f, want %.9f (±%g)", name, got, want, tol)
	}
}

// TestReviewVectors chains the reviews of the docs/formulas.md#fsrs-6 test-vector table; t is days
// since the previous row's review. Due is the review plus the table's I(0.9) in days (the
// table's four decimals: ±5 s).
func TestReviewVectors(t *testing.T) {
	f := NewFSRS()
	rows := []struct {
		days     float64 // since previous review; ignored for the first row
		g        Grade
		s, d, iv float64
	}{
		{0, Good, 2.306500, 2.118104, 2.3065},
		{3, Good, 13.826904, 2.111214, 13.8269},
		{10, Again, 1.666141, 7.392238, 1.6661},
		{2, Easy, 7.996156, 6.506074, 7.9962},
		{5, Hard, 13.780943, 7.665797, 13.7809},
		{0, Good, 13.780943, 7.653360, 13.7809},
	}
	var s models.Schedule
	now := t0
	for i, r := range rows {
		now = now.Add(time.Duration(r.days * float64(Day)))
		s = f.Review(s, r.g, now)
		near(t, "S", s.Stability, r.s, 5e-7)
		near(t, "D", s.Difficulty, r.d, 5e-7)
		near(t, "I(0.9)", f.Interval(0.9, s.Stability), r.iv, 5e-5)
		if s.Reps != i+1 {
			t.Errorf("row %d: Reps = %d, want %d", i, s.Reps, i+1)
		}
		if !s.LastReview.Equal(now) {
			t.Errorf("row %d: LastReview = %v, want %v", i, s.LastReview, now)
		}
		wantDue := now.Add(time.Duration(r.iv * float64(Day)))
		if d := s.Due.Sub(wantDue); d < -5*time.Second || d > 5*time.Second {
			t.Errorf("row %d: Due = %v, want %v", i, s.Due, wantDue)
		}
	}
	if s.Lapses != 1 {
		t.Errorf("Lapses = %d, want 1 (one Again after the first review)", s.Lapses)
	}
}

func TestCurve(t *testing.T) {
	f := &FSRS{} // zero value: default weights and settings
	near(t, "F", f.Factor(), 0.980346, 5e-7)
	near(t, "R(3,1)", f.Retrievability(3, 1), 0.809388, 5e-7)
	near(t, "R(100,10)", f.Retrievability(100, 10), 0.692827, 5e-7)
	near(t, "R(S,S)", f.Retrievability(7.5, 7.5), 0.9, 1e-12)
	near(t, "R(0,S)", f.Retrievability(0, 7.5), 1, 0)
	near(t, "R(-1,S)", f.Retrievability(-1, 7.5), 1, 0)
	near(t, "I(0.8,10)", f.Interval(0.8, 10), 33.1596, 5e-5)
	near(t, "I(0.7,10)", f.Interval(0.7, 10), 92.8791, 5e-5)
	near(t, "I(0.9,S)", f.Interval(0.9, 42), 42, 1e-9)
	// The interval inverts the curve.
	near(t, "R(I(0.8,10),10)", f.Retrievability(f.Interval(0.8, 10), 10), 0.8, 1e-12)
}

// TestInitial checks S0 and D0 of docs/formulas.md#fsrs-6: S0(G) = w[G−1], D0(G) = w4 − e^(w5·(G−1)) + 1
// clamped to [1, 10], computed by hand from the default weights.
func TestInitial(t *testing.T) {
	f := NewFSRS()
	for _, c := range []struct {
		g    Grade
		s, d float64
	}{
		{Again, 0.212, 6.4133},   // w4 − e^0 + 1
		{Hard, 1.2931, 5.112171}, // 6.4133 − e^0.8334 + 1
		{Good, 2.3065, 2.118104},
		{Easy, 8.2956, 1}, // w4 − e^(3·w5) + 1 < 1: clamped
	} {
		near(t, "S0", f.InitStability(c.g), c.s, 1e-12)
		near(t, "D0", f.InitDifficulty(c.g), c.d, 5e-7)
	}
	// S0 is at least 0.1 whatever the weights say.
	w := DefaultWeights
	w[0] = 0.01
	near(t, "S0 floor", (&FSRS{W: w}).InitStability(Again), 0.1, 0)
}

// TestNextStabilityBranches checks each branch of S′ in docs/formulas.md#fsrs-6 against values
// computed by hand (Python) from its formulas and the default weights.
func TestNextStabilityBranches(t *testing.T) {
	f := NewFSRS()
	// Same day, Again: S·e^(w17·(G−3+w18))·S^(−w19) = 5·e^(0.5425·(−1.9088))·5^(−0.0658); the
	// multiplier below 1 is kept.
	near(t, "same-day Again", f.NextStability(5, 5, 1, Again, 0), 1.596818, 1e-6)
	// Same day, Hard: multiplier raised to 1 (G ≥ 2).
	near(t, "same-day Hard", f.NextStability(5, 5, 1, Hard, 0.5), 5, 0)
	// Same day, Easy: 5·e^(0.5425·1.0912)·5^(−0.0658), a multiplier above 1.
	near(t, "same-day Easy", f.NextStability(5, 5, 1, Easy, 0.99), 8.129610, 1e-6)
	// A lapse never raises stability beyond S/e^(w17·w18) = 0.5/e^(0.5425·0.0912).
	near(t, "lapse cap", f.NextStability(0.5, 1, 0.01, Again, 400), 0.475864, 1e-6)
	// w11·D^(−w12)·((S+1)^w13 − 1)·e^(w14·(1−R)) = 1.4835·8^(−0.0614)·(21^0.2629 − 1)·e^(1.6483·0.4),
	// under the cap 20/e^(w17·w18) = 19.03.
	near(t, "lapse", f.NextStability(20, 8, 0.6, Again, 30), 3.096164, 1e-6)
	// Clamps.
	near(t, "max S", f.NextStability(36000, 1, 0.01, Easy, 10000), MaxStability, 0)
	near(t, "min S", f.NextStability(0.0001, 10, 1, Again, 0), MinStability, 0)
	// Success grows with a lower R (spacing effect) and Easy > Good > Hard.
	g1 := f.NextStability(10, 5, 0.9, Good, 10)
	g2 := f.NextStability(10, 5, 0.7, Good, 30)
	if !(g2 > g1) {
		t.Errorf("stability after a Good at R=0.7 (%v) should exceed that at R=0.9 (%v)", g2, g1)
	}
	h, e := f.NextStability(10, 5, 0.9, Hard, 10), f.NextStability(10, 5, 0.9, Easy, 10)
	if !(h < g1 && g1 < e) {
		t.Errorf("want Hard < Good < Easy, got %v %v %v", h, g1, e)
	}
}

func TestNextDifficulty(t *testing.T) {
	f := NewFSRS()
	near(t, "D after Good", f.NextDifficulty(2.118104, Good), 2.111214, 5e-7)
	// At D = 10 an Again adds nothing ((10−D)/9 = 0); mean reversion pulls slightly down:
	// 0.999·10 + 0.001·D0(4), with D0(4) = 6.4133 − e^(3·0.8334) + 1 = −4.771631 unclamped (as
	// the table's second row requires: 0.999·2.118104 + 0.001·D0(4) = 2.111214).
	near(t, "D at the top", f.NextDifficulty(10, Again), 9.985228, 1e-6)
	near(t, "D clamps low", f.NextDifficulty(1, Easy), 1, 0)
	near(t, "D out-of-range input", f.NextDifficulty(42, Good), f.NextDifficulty(10, Good), 0)
}

func TestReviewLateEventAndCooldown(t *testing.T) {
	f := NewFSRS()
	s := f.Review(models.Schedule{}, Good, t0)
	// An event dated before the last review is a same-day review at the last review.
	late := f.Review(s, Good, t0.Add(-time.Hour))
	if !late.LastReview.Equal(t0) {
		t.Errorf("LastReview = %v, want %v", late.LastReview, t0)
	}
	near(t, "late S", late.Stability, s.Stability, 0)
	// Due never precedes CooldownTo.
	s.CooldownTo = t0.Add(30 * Day)
	next := f.Review(s, Again, t0.Add(Day))
	if !next.Due.Equal(s.CooldownTo) {
		t.Errorf("Due = %v, want the cooldown end %v", next.Due, s.CooldownTo)
	}
	if !next.CooldownTo.Equal(s.CooldownTo) {
		t.Errorf("CooldownTo = %v, want it kept at %v", next.CooldownTo, s.CooldownTo)
	}
}

func TestMaxInterval(t *testing.T) {
	f := NewFSRS()
	f.MaxInterval = 10 * Day
	s := f.Review(models.Schedule{Reps: 3, Stability: 500, Difficulty: 3, LastReview: t0}, Easy, t0.Add(400*Day))
	if got, want := s.Due.Sub(s.LastReview), 10*Day; got != want {
		t.Errorf("interval = %v, want the cap %v", got, want)
	}
	// Intervals beyond time.Duration's range saturate instead of wrapping.
	f = &FSRS{TargetRetention: 0.01, MaxInterval: time.Duration(math.MaxInt64)}
	s = f.Review(models.Schedule{Reps: 1, Stability: MaxStability, Difficulty: 1, LastReview: t0}, Easy, t0.Add(Day))
	if !s.Due.After(t0) {
		t.Errorf("Due = %v, want far in the future", s.Due)
	}
}

func BenchmarkReview(b *testing.B) {
	f := NewFSRS()
	s := f.Review(models.Schedule{}, Good, t0)
	now := t0
	for b.Loop() {
		now = now.Add(Day)
		s = f.Review(s, Good, now)
	}
}
