package experiment

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/salience-ai/salience/models"
)

// FuzzAnalyze: any counts a store could send (negative, inconsistent, huge) give a report
// that renders to valid JSON without NaN, and probabilities stay within [0, 1].
func FuzzAnalyze(f *testing.F) {
	f.Add(5000, 1000, 150, 50, 100, 0.5, 5200, 1000, 180, 70, 70, 0.5, 20.0)
	f.Add(0, 0, 0, 0, 0, 0.0, 0, 0, 0, 0, 0, 0.0, math.NaN())
	f.Add(1, 10, 10, 10, 0, 1.0, -1, 5, 7, 0, 9, -2.0, math.Inf(1))
	f.Add(10, 1_000_000, 300_000, 1, 0, 1.0, 10, 1_000_000, 301_000, 0, 0, 1.0, 1.0)
	f.Fuzz(func(t *testing.T, convA, nA, usedA, helpA, disA int, shareA float64, convB, nB, usedB, helpB, disB int, shareB, lat float64) {
		in := Input{Variants: []Tally{
			{Variant: "a", Share: shareA, Conversations: convA, Surfaced: nA, Used: usedA, Helpful: helpA, Dismissed: disA,
				LatenciesMS: []float64{lat}, Days: []DayTally{{Day: day0, Surfaced: nA, Used: usedA}}},
			{Variant: "b", Share: shareB, Conversations: convB, Surfaced: nB, Used: usedB, Helpful: helpB, Dismissed: disB,
				Days: []DayTally{{Day: day0, Surfaced: nB, Used: usedB}}},
		}}
		r := Analyze(in)
		var b bytes.Buffer
		if err := WriteJSON(&b, r); err != nil {
			t.Fatalf("WriteJSON: %v", err)
		}
		if !json.Valid(b.Bytes()) {
			t.Fatal("invalid JSON")
		}
		for _, c := range r.Comparisons {
			for _, p := range []*float64{c.P, c.ProbBeatControl, c.ChanceToWin, c.SequentialP} {
				if p != nil && !(*p >= 0 && *p <= 1) {
					t.Errorf("probability %g outside [0, 1] in %+v", *p, c)
				}
			}
		}
		for _, v := range r.Variants {
			if v.PrecisionCI != nil && !(0 <= v.PrecisionCI.Low && v.PrecisionCI.Low <= v.PrecisionCI.High && v.PrecisionCI.High <= 1) {
				t.Errorf("Wilson interval %+v", *v.PrecisionCI)
			}
		}
	})
}

// FuzzAnalyzePerTurn: with any turn and empty-turn counts and any primary metric, the
// per-turn metrics and comparisons stay finite, rewards and their intervals within [0, 1],
// and the report renders to valid JSON.
func FuzzAnalyzePerTurn(f *testing.F) {
	f.Add(uint8(0), 2000, 100, 3800, 2280, 100, 2000, 1600, 400, 360, 20)
	f.Add(uint8(1), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	f.Add(uint8(2), 5, 9, -3, 7, 1, -1, 2, 3, 4, 5)
	f.Add(uint8(3), 1, 0, 1_000_000, 999_999, 0, 1_000_000, 1_000_000, 0, 0, 0)
	f.Fuzz(func(t *testing.T, m uint8, turnsA, emptyA, nA, usedA, disA, turnsB, emptyB, nB, usedB, disB int) {
		metric := models.PrimaryMetrics[int(m)%len(models.PrimaryMetrics)]
		in := Input{PrimaryMetric: metric, Variants: []Tally{
			{Variant: "a", Share: 0.5, Conversations: 10, Turns: turnsA, EmptyTurns: emptyA, Surfaced: nA, Used: usedA, Dismissed: disA,
				Days: []DayTally{{Day: day0, Turns: turnsA, EmptyTurns: emptyA, Surfaced: nA, Used: usedA, Dismissed: disA}}},
			{Variant: "b", Share: 0.5, Conversations: 10, Turns: turnsB, EmptyTurns: emptyB, Surfaced: nB, Used: usedB, Dismissed: disB,
				Days: []DayTally{{Day: day0, Turns: turnsB, EmptyTurns: emptyB, Surfaced: nB, Used: usedB, Dismissed: disB}}},
		}}
		r := Analyze(in)
		var b bytes.Buffer
		if err := WriteJSON(&b, r); err != nil || !json.Valid(b.Bytes()) {
			t.Fatalf("JSON: %v", err)
		}
		for _, v := range r.Variants {
			if v.RewardPerTurn != nil && !(*v.RewardPerTurn >= 0 && *v.RewardPerTurn <= 1 &&
				0 <= v.RewardPerTurnCI.Low && v.RewardPerTurnCI.Low <= v.RewardPerTurnCI.High && v.RewardPerTurnCI.High <= 1) {
				t.Errorf("reward per turn %g, interval %+v", *v.RewardPerTurn, *v.RewardPerTurnCI)
			}
			for _, iv := range []*Interval{v.UsedPerTurnCI, v.SurfacedPerTurnCI} {
				if iv != nil && !(0 <= iv.Low && iv.Low <= iv.High) {
					t.Errorf("per-turn interval %+v", *iv)
				}
			}
		}
		for _, c := range r.Comparisons {
			if c.Metric != metric {
				t.Errorf("comparison on %q, want %q", c.Metric, metric)
			}
			for _, p := range []*float64{c.P, c.ProbBeatControl, c.ChanceToWin, c.SequentialP} {
				if p != nil && !(*p >= 0 && *p <= 1) {
					t.Errorf("probability %g outside [0, 1] in %+v", *p, c)
				}
			}
		}
	})
}
