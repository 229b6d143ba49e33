package experiment

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

var day0 = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// knownInput is the running example of docs/formulas.md#known-values as a report: control 200/1000
// (150 used + 50 helpful), treatment 250/1000, conversations 5000 vs 5200 at 50/50. It has
// no daily tallies, so the sequential p is the single look of the known values.
func knownInput() Input {
	return Input{
		ExperimentID: "01JEXPERIMENT", Name: "shorter half-life", Status: "running",
		CreatedAt: day0, AsOf: day0.AddDate(0, 0, 14), PrimaryMetric: "precision",
		Variants: []Tally{
			{Variant: "control", Share: 0.5, Conversations: 5000, Turns: 4000, Surfaced: 1000,
				Used: 150, Helpful: 50, Ignored: 700, Dismissed: 100, LatenciesMS: []float64{30, 10, 20, 40}},
			{Variant: "short", Share: 0.5, Conversations: 5200, Turns: 4100, Surfaced: 1000,
				Used: 180, Helpful: 70, Ignored: 680, Dismissed: 70, LatenciesMS: []float64{25, 15}},
		},
	}
}

func val(t *testing.T, name string, p *float64) float64 {
	t.Helper()
	if p == nil {
		t.Fatalf("%s is nil", name)
	}
	return *p
}

func TestAnalyzeKnownValues(t *testing.T) {
	r := Analyze(knownInput())
	if r.Control != "control" || len(r.Variants) != 2 || len(r.Comparisons) != 1 {
		t.Fatalf("control %q, %d variants, %d comparisons", r.Control, len(r.Variants), len(r.Comparisons))
	}
	ctl := r.Variants[0]
	near(t, "control precision", val(t, "precision", ctl.Precision), "0.2")
	near(t, "control dismissal rate", val(t, "dismissal", ctl.DismissalRate), "0.1")
	near(t, "control p50", val(t, "p50", ctl.LatencyP50MS), "20")
	near(t, "control p95", val(t, "p95", ctl.LatencyP95MS), "40")

	c := r.Comparisons[0]
	near(t, "difference", val(t, "difference", c.Difference), "0.05")
	near(t, "diff CI low", c.DifferenceCI.Low, "0.013464")
	near(t, "diff CI high", c.DifferenceCI.High, "0.086536")
	near(t, "z", val(t, "z", c.Z), "2.677398")
	near(t, "p", val(t, "p", c.P), "0.00741965")
	near(t, "P(beat control)", val(t, "prob", c.ProbBeatControl), "0.99628333")
	near(t, "relative lift", val(t, "lift", c.RelativeLift), "0.25")
	near(t, "lift SE", val(t, "lift SE", c.RelativeLiftSE), "0.104583")
	near(t, "lift p", val(t, "lift p", c.RelativeLiftP), "0.0168274")
	near(t, "chance to win", val(t, "chance", c.ChanceToWin), "0.991586")
	near(t, "loss choosing variant", val(t, "loss B", c.ExpectedLossVariant), "0.00002094")
	near(t, "loss choosing control", val(t, "loss A", c.ExpectedLossControl), "0.05002094")
	near(t, "sequential p", val(t, "seq p", c.SequentialP), "0.232651")
	near(t, "sequential half-width", val(t, "seq hw", c.SequentialHalfWidth), "0.326693")

	if r.SRM == nil {
		t.Fatal("SRM nil")
	}
	near(t, "SRM χ²", r.SRM.ChiSquare, "3.921569")
	near(t, "SRM p", r.SRM.P, "0.0476704")
	if r.SRM.Mismatch {
		t.Error("SRM p 0.048 flagged; SRMAlpha is 0.001")
	}
	// p = 0.0074 at a fixed horizon, but the always-valid p is 0.23: a report read as it
	// grows cannot call this a win yet.
	if c.Outcome != "no_difference_yet" {
		t.Errorf("outcome %q, want no_difference_yet; verdict %q", c.Outcome, c.Verdict)
	}
	if !strings.Contains(c.Verdict, "No reliable difference yet") || !strings.Contains(c.Verdict, "0.233") {
		t.Errorf("verdict %q", c.Verdict)
	}
}

// tally is a variant with x successes (all "used") out of n surfacings.
func tally(name string, share float64, conversations, x, n int) Tally {
	return Tally{Variant: name, Share: share, Conversations: conversations, Turns: n, Surfaced: n,
		Used: x, Ignored: n - x}
}

func TestAnalyzeVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name     string
		status   string
		variants []Tally
		want     []string // outcome per comparison
		contains string   // in the first verdict
	}{
		{"clear win", "running",
			[]Tally{tally("a", 1, 1000, 2000, 10000), tally("b", 1, 1000, 2500, 10000)},
			[]string{"better"}, "b is better than a"},
		{"clear loss", "running",
			[]Tally{tally("a", 1, 1000, 2500, 10000), tally("b", 1, 1000, 2000, 10000)},
			[]string{"worse"}, "b is worse than a"},
		{"noisy", "running",
			[]Tally{tally("a", 1, 1000, 10, 100), tally("b", 1, 1000, 15, 100)},
			[]string{"no_difference_yet"}, "keep the experiment running"},
		{"noisy and stopped", "stopped",
			[]Tally{tally("a", 1, 1000, 10, 100), tally("b", 1, 1000, 15, 100)},
			[]string{"no_difference_yet"}, "stopped before one was shown"},
		{"sample ratio mismatch overrides a win", "running",
			[]Tally{tally("a", 1, 3300, 2000, 10000), tally("b", 1, 3300, 2500, 10000), tally("c", 1, 3600, 2000, 10000)},
			[]string{"sample_ratio_mismatch", "sample_ratio_mismatch"}, "Do not trust"},
		{"nothing surfaced", "running",
			[]Tally{tally("a", 1, 10, 0, 0), tally("b", 1, 10, 0, 0)},
			[]string{"not_enough_data"}, "Not enough data"},
		{"control never used", "running",
			[]Tally{tally("a", 1, 10, 0, 50), tally("b", 1, 10, 20, 50)},
			[]string{"not_enough_data"}, "relative lift"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Analyze(Input{ExperimentID: "x", Status: tc.status, PrimaryMetric: "precision", Variants: tc.variants})
			var got []string
			for _, c := range r.Comparisons {
				got = append(got, c.Outcome)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("outcomes %v, want %v (verdict %q)", got, tc.want, r.Comparisons[0].Verdict)
			}
			if v := r.Comparisons[0].Verdict; !strings.Contains(v, tc.contains) {
				t.Errorf("verdict %q does not contain %q", v, tc.contains)
			}
		})
	}
}

// TestAnalyzeSequentialIsMinimumOverDays: a treatment that led strongly in its first days
// and then fell back. The report's always-valid p is the minimum over the cumulative daily
// looks, so it remembers the early evidence; the p of the final look alone is larger.
func TestAnalyzeSequentialIsMinimumOverDays(t *testing.T) {
	in := Input{ExperimentID: "x", Status: "running", PrimaryMetric: "precision"}
	a := Tally{Variant: "a", Share: 1, Conversations: 100}
	b := Tally{Variant: "b", Share: 1, Conversations: 100}
	perDay := [][2]int{{200, 330}, {200, 320}, {200, 150}, {200, 120}, {200, 200}} // successes of a, b per 1000
	var looks []Look
	var cum Look
	for i, d := range perDay {
		day := day0.AddDate(0, 0, i)
		a.Days = append(a.Days, DayTally{Day: day, Surfaced: 1000, Used: d[0]})
		b.Days = append(b.Days, DayTally{Day: day, Surfaced: 1000, Used: d[1]})
		a.Surfaced, a.Used = a.Surfaced+1000, a.Used+d[0]
		b.Surfaced, b.Used = b.Surfaced+1000, b.Used+d[1]
		cum = Look{XA: cum.XA + d[0], NA: cum.NA + 1000, XB: cum.XB + d[1], NB: cum.NB + 1000}
		looks = append(looks, cum)
	}
	in.Variants = []Tally{a, b}
	got := val(t, "sequential p", Analyze(in).Comparisons[0].SequentialP)
	want, _ := SequentialLiftP(looks, Alpha, SequentialTuning)
	final, _ := SequentialLiftP(looks[len(looks)-1:], Alpha, SequentialTuning)
	if got != want {
		t.Errorf("sequential p = %g, want the minimum over the looks %g", got, want)
	}
	if !(got < final) {
		t.Errorf("sequential p = %g, not below the final look's %g: the early lead is forgotten", got, final)
	}
}

func TestAnalyzeDaysAndDeterminism(t *testing.T) {
	in := knownInput()
	in.Variants[0].Days = []DayTally{
		{Day: day0.AddDate(0, 0, 1), Surfaced: 263, Used: 80, Helpful: 1},
		{Day: day0, Surfaced: 10, Dismissed: 3},
		{Day: day0.AddDate(0, 0, 2)}, // nothing surfaced that day
	}
	lat := slices.Clone(in.Variants[0].LatenciesMS)
	r := Analyze(in)
	days := r.Variants[0].Days
	if len(days) != 3 || !days[0].Day.Equal(day0) {
		t.Fatalf("days not sorted ascending: %+v", days)
	}
	near(t, "day 0 Wilson high", days[0].PrecisionCI.High, "0.277533")
	near(t, "day 1 Wilson low", days[1].PrecisionCI.Low, "0.255289")
	near(t, "day 1 Wilson high", days[1].PrecisionCI.High, "0.366210")
	if days[2].Precision != nil || days[2].PrecisionCI != nil {
		t.Errorf("a day with nothing surfaced has precision %v", days[2].Precision)
	}
	if !slices.Equal(in.Variants[0].LatenciesMS, lat) || !in.Variants[0].Days[0].Day.Equal(day0.AddDate(0, 0, 1)) {
		t.Error("Analyze modified its input")
	}
	if r2 := Analyze(in); !reflect.DeepEqual(r, r2) {
		t.Error("Analyze is not deterministic")
	}
}

// TestAnalyzeDegenerateInputIsValidJSON: whatever the counts, the JSON has no NaN or
// infinity, and an undefined statistic is omitted.
func TestAnalyzeDegenerateInputIsValidJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   Input
	}{
		{"no variants", Input{}},
		{"control only", Input{Variants: []Tally{tally("a", 1, 5, 1, 2)}}},
		{"nothing at all", Input{Variants: []Tally{{Variant: "a"}, {Variant: "b"}}}},
		{"NaN share and latencies", Input{Variants: []Tally{
			{Variant: "a", Share: math.NaN(), Conversations: 3, Surfaced: 2, Used: 1, LatenciesMS: []float64{math.NaN(), math.Inf(1)}},
			{Variant: "b", Share: math.Inf(1), Conversations: 3, Surfaced: 2, Used: 2}}}},
		{"all successes", Input{Variants: []Tally{tally("a", 1, 5, 10, 10), tally("b", 1, 5, 10, 10)}}},
		{"more used than surfaced", Input{Variants: []Tally{
			{Variant: "a", Share: 1, Surfaced: 10, Used: 8, Helpful: 8},
			{Variant: "b", Share: 1, Surfaced: 10, Used: 5}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Analyze(tc.in)
			var b bytes.Buffer
			if err := WriteJSON(&b, r); err != nil {
				t.Fatalf("WriteJSON: %v", err)
			}
			if s := b.String(); strings.Contains(s, "NaN") || strings.Contains(s, "Inf") {
				t.Errorf("JSON holds NaN/Inf:\n%s", s)
			}
			for _, w := range []func(*bytes.Buffer, Report) error{
				func(b *bytes.Buffer, r Report) error { return WriteCSV(b, r) },
				func(b *bytes.Buffer, r Report) error { return WriteText(b, r) },
				func(b *bytes.Buffer, r Report) error { return WriteHTML(b, r) },
			} {
				var out bytes.Buffer
				if err := w(&out, r); err != nil {
					t.Errorf("render: %v", err)
				}
				if strings.Contains(out.String(), "NaN") {
					t.Errorf("rendering holds NaN")
				}
			}
		})
	}
	// Nothing surfaced: precision and its interval are absent, not 0 or null.
	var b bytes.Buffer
	_ = WriteJSON(&b, Analyze(Input{Variants: []Tally{{Variant: "a"}, {Variant: "b"}}}))
	var doc struct {
		Variants    []map[string]any `json:"variants"`
		Comparisons []map[string]any `json:"comparisons"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"precision", "precision_ci", "dismissal_rate", "latency_p50_ms"} {
		if _, ok := doc.Variants[0][k]; ok {
			t.Errorf("variant has %q with nothing surfaced", k)
		}
	}
	for _, k := range []string{"difference", "z", "p", "prob_beat_control", "sequential_p"} {
		if _, ok := doc.Comparisons[0][k]; ok {
			t.Errorf("comparison has %q with nothing surfaced", k)
		}
	}
}
