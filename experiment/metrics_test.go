package experiment

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/salience-ai/salience/engagement"
	"github.com/salience-ai/salience/models"
)

// metricsTally: 10 turns, 4 of them empty; 12 surfacings: 6 used, 2 helpful, 1 dismissed,
// and 3 ignored or pending.
func metricsTally() Tally {
	return Tally{Variant: "a", Share: 1, Turns: 10, EmptyTurns: 4, Surfaced: 12, Used: 6, Helpful: 2, Ignored: 2, Dismissed: 1}
}

func TestPerTurnMetricsKnownValues(t *testing.T) {
	v := Analyze(Input{Variants: []Tally{metricsTally()}}).Variants[0]
	// Per surfacing (2·1 + 6·0.8 + 3·0.2 + 1·0) / 12 = 0.616667; per turn (4·0.4 + 6·0.616667) / 10.
	near(t, "reward per turn", val(t, "reward", v.RewardPerTurn), "0.53")
	near(t, "reward CI low", v.RewardPerTurnCI.Low, "0.220661") // 0.53 ∓ 1.959964·√(0.53·0.47/10)
	near(t, "reward CI high", v.RewardPerTurnCI.High, "0.839339")
	near(t, "used per turn", val(t, "used", v.UsedPerTurn), "0.8") // (6 + 2) / 10
	near(t, "used CI low", v.UsedPerTurnCI.Low, "0.245638")        // 0.8 ∓ 1.959964·√(0.8/10)
	near(t, "used CI high", v.UsedPerTurnCI.High, "1.354362")
	near(t, "surfaced per turn", val(t, "surfaced", v.SurfacedPerTurn), "1.2")
	near(t, "surfaced CI low", v.SurfacedPerTurnCI.Low, "0.521049")
	near(t, "surfaced CI high", v.SurfacedPerTurnCI.High, "1.878951")
	near(t, "dismissal rate", val(t, "dismissal", v.DismissalRate), "0.083333")
	want, _ := Wilson(1, 12, Alpha)
	if v.DismissalRateCI == nil || *v.DismissalRateCI != want {
		t.Errorf("dismissal CI %v, want the Wilson interval %v", v.DismissalRateCI, want)
	}
	if v.EmptyTurns != 4 {
		t.Errorf("empty turns %d, want 4", v.EmptyTurns)
	}

	// Bounds: a reward interval stays in [0, 1], a count's above 0; no turns, no metric.
	hi := Analyze(Input{Variants: []Tally{{Variant: "a", Turns: 2, Surfaced: 2, Helpful: 2}}}).Variants[0]
	if val(t, "reward", hi.RewardPerTurn) != 1 || hi.RewardPerTurnCI.High != 1 {
		t.Errorf("all helpful: reward %v CI %v, want 1 with the interval capped at 1", *hi.RewardPerTurn, *hi.RewardPerTurnCI)
	}
	none := Analyze(Input{Variants: []Tally{{Variant: "a"}}}).Variants[0]
	if none.RewardPerTurn != nil || none.UsedPerTurn != nil || none.SurfacedPerTurn != nil || none.DismissalRateCI != nil {
		t.Errorf("no turns: %+v, want the per-turn metrics absent", none)
	}
	silent := Analyze(Input{Variants: []Tally{{Variant: "a", Turns: 5, EmptyTurns: 5}}}).Variants[0]
	if val(t, "reward", silent.RewardPerTurn) != engagement.EmptyTurnReward || val(t, "used", silent.UsedPerTurn) != 0 {
		t.Errorf("only empty turns: reward %v used %v, want 0.4 and 0", *silent.RewardPerTurn, *silent.UsedPerTurn)
	}
}

// TestRewardPerTurnIsTheBanditsReward: when every non-empty turn surfaces as many memories,
// the report's reward per turn is the mean of engagement.TurnReward over the turns.
func TestRewardPerTurnIsTheBanditsReward(t *testing.T) {
	src := rand.New(rand.NewPCG(45, 2))
	events := []models.EventType{models.EventUsed, models.EventHelpful, models.EventIgnored, models.EventDismissed, ""}
	var tl Tally
	var sum float64
	for range 500 {
		tl.Turns++
		if src.IntN(3) == 0 {
			tl.EmptyTurns++
			sum += engagement.TurnReward(nil, 0)
			continue
		}
		var evs []models.EventType
		for range 3 {
			tl.Surfaced++
			switch ev := events[src.IntN(len(events))]; ev {
			case "": // no outcome yet: counts as ignored
			default:
				evs = append(evs, ev)
				switch ev {
				case models.EventUsed:
					tl.Used++
				case models.EventHelpful:
					tl.Helpful++
				case models.EventIgnored:
					tl.Ignored++
				case models.EventDismissed:
					tl.Dismissed++
				}
			}
		}
		sum += engagement.TurnReward(evs, 3)
	}
	if got, want := RewardPerTurn(tl), sum/float64(tl.Turns); math.Abs(got-want) > 1e-12 {
		t.Errorf("reward per turn %.15g, want the mean of TurnReward %.15g", got, want)
	}
}

func TestLiftOfMeansKnownValues(t *testing.T) {
	l, ok := LiftOfMeans(0.5, 0.0025, 0.6, 0.0025)
	if !ok {
		t.Fatal("not ok")
	}
	near(t, "lift", l.L, "0.2")
	near(t, "lift SE", l.SE, "0.156205") // √(0.0025/0.25 + 0.36·0.0025/0.0625)
	if _, ok := LiftOfMeans(0, 0.01, 0.5, 0.01); ok {
		t.Error("lift over a zero mean: ok, want undefined")
	}
	if _, ok := LiftOfMeans(0.5, 0, 0.5, 0); ok {
		t.Error("lift with no variance: ok, want undefined")
	}
}

// TestComparisonOnAPerTurnMean: the difference, its interval, z, p and P(beat control) of
// reward per turn, from the two variants' estimates.
func TestComparisonOnAPerTurnMean(t *testing.T) {
	a := Tally{Variant: "a", Share: 0.5, Conversations: 100, Turns: 1000, EmptyTurns: 1000}                          // reward 0.4
	b := Tally{Variant: "b", Share: 0.5, Conversations: 100, Turns: 1000, EmptyTurns: 500, Surfaced: 500, Used: 500} // 0.5·0.4 + 0.5·0.8 = 0.6
	c := Analyze(Input{Variants: []Tally{a, b}}).Comparisons[0]
	if c.Metric != models.MetricRewardPerTurn {
		t.Errorf("metric %q, want the default reward_per_turn", c.Metric)
	}
	near(t, "difference", val(t, "difference", c.Difference), "0.2")
	// SE = √(0.4·0.6/1000 + 0.6·0.4/1000) = 0.021909.
	near(t, "CI low", c.DifferenceCI.Low, "0.157059")
	near(t, "CI high", c.DifferenceCI.High, "0.242941")
	near(t, "z", val(t, "z", c.Z), "9.128709") // 0.2 / 0.021909
	if val(t, "P(beat)", c.ProbBeatControl) < 0.999999 || c.Outcome != "better" {
		t.Errorf("P(beat) %v, outcome %s (%s); want a sure win", *c.ProbBeatControl, c.Outcome, c.Verdict)
	}
	if !strings.Contains(c.Verdict, "reward per turn 0.600 vs 0.400") {
		t.Errorf("verdict %q does not state the metric's values", c.Verdict)
	}
}

// TestDismissalRateLowerIsBetter: with dismissal_rate primary, fewer dismissals win.
func TestDismissalRateLowerIsBetter(t *testing.T) {
	a := Tally{Variant: "a", Share: 0.5, Conversations: 100, Turns: 2000, Surfaced: 2000, Used: 500, Dismissed: 400}
	b := Tally{Variant: "b", Share: 0.5, Conversations: 100, Turns: 2000, Surfaced: 2000, Used: 500, Dismissed: 200}
	c := Analyze(Input{PrimaryMetric: models.MetricDismissalRate, Variants: []Tally{a, b}}).Comparisons[0]
	if c.Outcome != "better" || !strings.Contains(c.Verdict, "lower is better") {
		t.Errorf("outcome %s (%s), want better", c.Outcome, c.Verdict)
	}
	if val(t, "difference", c.Difference) >= 0 || val(t, "P(beat)", c.ProbBeatControl) < 0.99 || val(t, "chance", c.ChanceToWin) < 0.99 {
		t.Errorf("difference %v, P(beat) %v, chance to win %v; want a negative difference counted as the win",
			*c.Difference, *c.ProbBeatControl, *c.ChanceToWin)
	}
	c = Analyze(Input{PrimaryMetric: models.MetricDismissalRate, Variants: []Tally{b, a}}).Comparisons[0]
	if c.Outcome != "worse" {
		t.Errorf("more dismissals: outcome %s, want worse", c.Outcome)
	}
}

// quietExperiment simulates issue 45's experiment (seeded): the control surfaces two
// memories on 95 % of turns, each used with probability 0.6; "quiet" (a high fixed
// threshold) surfaces one memory on 20 % of turns, used with probability 0.9. Quiet has the
// higher precision and the fewer uses per turn; an unused memory is ignored, or dismissed
// with probability 0.05. Reward per turn ranks quiet below the control here because quiet is
// silent on 80 % of turns: a turn earns 0.4 when empty and about 0.2 + 0.6·precision when
// not, so a quiet variant that is silent less often (with issue 45's own counts, 99 turns of
// which 19 empty) would lead on reward per turn too, and only used per turn would rank it
// below.
func quietExperiment(metric string) Input {
	src := rand.New(rand.NewPCG(45, 1))
	arm := func(name string, pShow float64, k int, pUse float64) Tally {
		tl := Tally{Variant: name, Share: 0.5, Conversations: 400}
		for d := range 5 {
			var day DayTally
			day.Day = day0.AddDate(0, 0, d)
			for range 400 {
				day.Turns++
				if src.Float64() >= pShow {
					day.EmptyTurns++
					continue
				}
				for range k {
					day.Surfaced++
					switch u := src.Float64(); {
					case u < pUse:
						day.Used++
					case src.Float64() < 0.05:
						day.Dismissed++
					default:
						day.Ignored++
					}
				}
			}
			tl.Days = append(tl.Days, day)
			tl.Turns += day.Turns
			tl.EmptyTurns += day.EmptyTurns
			tl.Surfaced += day.Surfaced
			tl.Used += day.Used
			tl.Ignored += day.Ignored
			tl.Dismissed += day.Dismissed
		}
		return tl
	}
	return Input{ExperimentID: "quiet", Name: "fixed threshold", Status: "running", CreatedAt: day0, AsOf: day0.AddDate(0, 0, 5),
		PrimaryMetric: metric, Variants: []Tally{arm("control", 0.95, 2, 0.6), arm("quiet", 0.2, 1, 0.9)}}
}

// TestQuietVariantIsNotPreferredByDefault is issue 45's acceptance 2: the variant that
// surfaces less at higher precision but with fewer uses per turn is not preferred by the
// default report (reward per turn) nor by used per turn; with precision declared primary it
// is; every report shows every metric, with intervals, in every rendering.
func TestQuietVariantIsNotPreferredByDefault(t *testing.T) {
	for _, tc := range []struct {
		metric, want string
	}{
		{"", "worse"},
		{models.MetricUsedPerTurn, "worse"},
		{models.MetricPrecision, "better"},
	} {
		r := Analyze(quietExperiment(tc.metric))
		ctl, quiet := r.Variants[0], r.Variants[1]
		if tc.metric == "" {
			t.Logf("control: reward %.3f used/turn %.3f surfaced/turn %.3f precision %.3f; quiet: %.3f %.3f %.3f %.3f",
				*ctl.RewardPerTurn, *ctl.UsedPerTurn, *ctl.SurfacedPerTurn, *ctl.Precision,
				*quiet.RewardPerTurn, *quiet.UsedPerTurn, *quiet.SurfacedPerTurn, *quiet.Precision)
			// The premise: quiet surfaces less, at higher precision, with fewer uses per turn.
			if !(*quiet.SurfacedPerTurn < *ctl.SurfacedPerTurn && *quiet.Precision > *ctl.Precision && *quiet.UsedPerTurn < *ctl.UsedPerTurn) {
				t.Fatal("the simulation does not have the issue's shape")
			}
		}
		c := r.Comparisons[0]
		wantMetric, _ := models.ParsePrimaryMetric(tc.metric)
		if r.PrimaryMetric != wantMetric || c.Metric != wantMetric {
			t.Errorf("%q: report ranks by %q, comparison by %q; want %q", tc.metric, r.PrimaryMetric, c.Metric, wantMetric)
		}
		if c.Outcome != tc.want {
			t.Errorf("primary %q: quiet is %s (%s), want %s", wantMetric, c.Outcome, c.Verdict, tc.want)
		}
		if !strings.HasPrefix(c.Verdict, "quiet is "+tc.want) || !strings.Contains(c.Verdict, metricLabel(wantMetric)) {
			t.Errorf("primary %q: verdict %q does not name the outcome and the metric", wantMetric, c.Verdict)
		}
		for _, v := range r.Variants {
			for name, x := range map[string]*float64{"reward per turn": v.RewardPerTurn, "used per turn": v.UsedPerTurn,
				"surfaced per turn": v.SurfacedPerTurn, "precision": v.Precision, "dismissal rate": v.DismissalRate} {
				if x == nil {
					t.Errorf("%s: %s missing", v.Variant, name)
				}
			}
			for name, iv := range map[string]*Interval{"reward per turn": v.RewardPerTurnCI, "used per turn": v.UsedPerTurnCI,
				"surfaced per turn": v.SurfacedPerTurnCI, "precision": v.PrecisionCI, "dismissal rate": v.DismissalRateCI} {
				if iv == nil || !(iv.Low < iv.High) {
					t.Errorf("%s: %s interval %v", v.Variant, name, iv)
				}
			}
		}
		var js, txt, page, csvb bytes.Buffer
		if err := WriteJSON(&js, r); err != nil {
			t.Fatal(err)
		}
		if err := WriteText(&txt, r); err != nil {
			t.Fatal(err)
		}
		if err := WriteHTML(&page, r); err != nil {
			t.Fatal(err)
		}
		if err := WriteCSV(&csvb, r); err != nil {
			t.Fatal(err)
		}
		for format, words := range map[string][]string{
			"json": {`"primary_metric": "` + wantMetric + `"`, `"reward_per_turn_ci"`, `"used_per_turn_ci"`, `"surfaced_per_turn_ci"`, `"precision_ci"`, `"dismissal_rate_ci"`},
			"text": {"Ranked by " + metricLabel(wantMetric), "reward/turn", "used/turn", "surfaced/turn", "precision", "dismissal"},
			"html": {`id="metrics-table"`, "reward per turn", "used per turn", "surfaced per turn", "precision", "dismissal rate", "Ranked by " + metricLabel(wantMetric)},
			"csv":  {"reward_per_turn_low", "used_per_turn_low", "surfaced_per_turn_low", "precision_low", "dismissal_rate_low", "," + wantMetric + ","},
		} {
			got := map[string]string{"json": js.String(), "text": txt.String(), "html": page.String(), "csv": csvb.String()}[format]
			for _, w := range words {
				if !strings.Contains(got, w) {
					t.Errorf("primary %q: the %s report lacks %q", wantMetric, format, w)
				}
			}
		}
	}
}
