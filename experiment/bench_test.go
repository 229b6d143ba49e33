package experiment

import (
	"io"
	"math/rand/v2"
	"testing"
)

// millionEventInput is issue #15's scale: 1,000,000 engagement events (outcomes of
// surfacings: used, helpful, ignored, dismissed) over two variants and 90 days, from
// 200,000 recall turns whose latencies are all in the tally.
func millionEventInput() Input {
	const (
		days          = 90
		eventsPerArm  = 500_000
		turnsPerArm   = 100_000
		conversations = 20_000
	)
	rng := rand.New(rand.NewPCG(15, 1_000_000))
	in := Input{ExperimentID: "01JBENCH", Name: "bench", Status: "running", CreatedAt: day0, AsOf: day0.AddDate(0, 0, days)}
	for i, precision := range []float64{0.20, 0.21} {
		t := Tally{Variant: []string{"control", "treatment"}[i], Share: 0.5, Conversations: conversations + i*37}
		for d := range days {
			dt := DayTally{Day: day0.AddDate(0, 0, d), Turns: turnsPerArm / days, Surfaced: eventsPerArm / days}
			for range dt.Surfaced {
				switch u := rng.Float64(); {
				case u < precision*0.7:
					dt.Used++
				case u < precision:
					dt.Helpful++
				case u < 0.95:
					dt.Ignored++
				default:
					dt.Dismissed++
				}
			}
			t.Turns += dt.Turns
			t.Surfaced += dt.Surfaced
			t.Used += dt.Used
			t.Helpful += dt.Helpful
			t.Ignored += dt.Ignored
			t.Dismissed += dt.Dismissed
			t.Days = append(t.Days, dt)
		}
		t.LatenciesMS = make([]float64, turnsPerArm)
		for j := range t.LatenciesMS {
			t.LatenciesMS[j] = 5 + rng.ExpFloat64()*20
		}
		in.Variants = append(in.Variants, t)
	}
	return in
}

// BenchmarkReport1M is the end-to-end cost of the HTML report over a million events once
// the store has tallied them: Analyze (percentiles of 200,000 latencies, the posteriors,
// 90 daily looks) and WriteHTML (both plots as SVG). Issue #15 asks for ≤ 2 s.
func BenchmarkReport1M(b *testing.B) {
	in := millionEventInput()
	b.ResetTimer()
	for b.Loop() {
		if err := WriteHTML(io.Discard, Analyze(in)); err != nil {
			b.Fatal(err)
		}
	}
}
