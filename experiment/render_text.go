package experiment

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"
)

// WriteText writes the terminal tables of `salience report experiment`: a header, the
// variants, the comparisons with their verdicts, the SRM check and the methods.
func WriteText(w io.Writer, r Report) error {
	ew := &errWriter{w: w}
	ew.printf("Experiment %s (%s) — %s\n", term(r.Name), term(r.ExperimentID), term(r.Status))
	ew.printf("created %s", r.CreatedAt.Format("2006-01-02 15:04 UTC"))
	if r.StoppedAt != nil {
		ew.printf(", stopped %s", r.StoppedAt.Format("2006-01-02 15:04 UTC"))
	}
	ew.printf(", as of %s\n\n", r.AsOf.Format("2006-01-02 15:04 UTC"))

	// Numbers align right; names read better aligned left, so they are padded to one width
	// before the right-aligning tabwriter sees them.
	names := make([]string, 0, len(r.Variants)+1)
	for _, v := range r.Variants {
		names = append(names, term(v.Variant))
	}
	name := padder(append(names, "variant"))

	ew.printf("Ranked by %s.\n\n", r.Methods.PrimaryMetric)
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	tabRow(tw, name("variant"), "share", "conversations", "turns", "empty", "surfaced", "used", "helpful", "ignored", "dismissed",
		"p50 ms", "p95 ms")
	for _, v := range r.Variants {
		tabRow(tw, name(term(v.Variant)), fmt.Sprintf("%.2f", v.Share), itoa(v.Conversations), itoa(v.Turns), itoa(v.EmptyTurns),
			itoa(v.Surfaced), itoa(v.Used), itoa(v.Helpful), itoa(v.Ignored), itoa(v.Dismissed),
			optMS(v.LatencyP50MS), optMS(v.LatencyP95MS))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	ew.printf("\n")
	tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	tabRow(tw, name("variant"), "reward/turn", "95 % CI", "used/turn", "95 % CI", "surfaced/turn", "95 % CI",
		"precision", "95 % CI", "dismissal", "95 % CI")
	for _, v := range r.Variants {
		tabRow(tw, name(term(v.Variant)), optF(v.RewardPerTurn, "%.3f"), ciMean(v.RewardPerTurnCI),
			optF(v.UsedPerTurn, "%.3f"), ciMean(v.UsedPerTurnCI), optF(v.SurfacedPerTurn, "%.3f"), ciMean(v.SurfacedPerTurnCI),
			optPct(v.Precision), ciPct(v.PrecisionCI), optPct(v.DismissalRate), ciPct(v.DismissalRateCI))
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	if len(r.Comparisons) > 0 {
		ew.printf("\nAgainst the control (%s), on %s:\n", term(r.Control), metricLabel(r.PrimaryMetric))
		tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
		tabRow(tw, name("variant"), "difference", "95 % CI", "z", "p", "lift", "lift SE", "chance to win",
			"P(beat control)", "loss if chosen", "loss if control", "always-valid p", "outcome")
		for _, c := range r.Comparisons {
			tabRow(tw, name(term(c.Variant)), optDiff(c.Metric, c.Difference), ciDiff(c.Metric, c.DifferenceCI), optF(c.Z, "%.3f"), optP(c.P),
				optPct(c.RelativeLift), optPct(c.RelativeLiftSE), optPct(c.ChanceToWin), optPct(c.ProbBeatControl),
				optF(c.ExpectedLossVariant, "%.5f"), optF(c.ExpectedLossControl, "%.5f"), optP(c.SequentialP), c.Outcome)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		ew.printf("\n")
		for _, c := range r.Comparisons {
			ew.printf("%s: %s\n", term(c.Variant), term(c.Verdict))
		}
	}

	ew.printf("\n")
	if r.SRM != nil {
		state := "ok"
		if r.SRM.Mismatch {
			state = "MISMATCH: the assignment does not follow the planned shares"
		}
		ew.printf("Sample ratio: χ² = %.3f, df = %d, p = %s — %s\n", r.SRM.ChiSquare, r.SRM.DF, fmtP(r.SRM.P), state)
	} else {
		ew.printf("Sample ratio: not checked (needs two variants with planned shares and conversations)\n")
	}
	m := r.Methods
	ew.printf("\nMethods: the primary metric is %s; reward per turn is %s; %s; precision %s; dismissal rate %s; difference %s; chance to win is %s; "+
		"P(beat control) is %s; expected loss by %s; %s.\n",
		m.PrimaryMetric, m.RewardPerTurn, m.PerTurn, m.Precision, m.DismissalRate, m.Difference, m.ChanceToWin, m.ProbBeatControl, m.ExpectedLoss, m.Sequential)
	return ew.err
}

// errWriter keeps the first write error so the renderer can write unconditionally.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, a ...any) { fmt.Fprintf(e, format, a...) }

// tabRow writes one tab-terminated row (AlignRight needs every cell terminated).
func tabRow(w io.Writer, cells ...string) {
	fmt.Fprint(w, strings.Join(cells, "\t")+"\t\n")
}

// term makes operator-typed text safe for a terminal and a table: control characters (an
// escape sequence in a variant name would drive the terminal) and tabs become U+FFFD.
func term(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return unicode.ReplacementChar
		}
		return r
	}, s)
}

// padder returns a function that pads a string with spaces on the right to the widest of
// names (in runes: names are mostly ASCII, and a wide character only shifts its own row).
func padder(names []string) func(string) string {
	w := 0
	for _, n := range names {
		w = max(w, utf8.RuneCountInString(n))
	}
	return func(s string) string {
		return s + strings.Repeat(" ", max(0, w-utf8.RuneCountInString(s)))
	}
}

func itoa(n int) string { return fmt.Sprint(n) }

func optF(x *float64, format string) string {
	if x == nil {
		return "–"
	}
	return fmt.Sprintf(format, *x)
}

func optP(x *float64) string {
	if x == nil {
		return "–"
	}
	return fmtP(*x)
}

func optPct(x *float64) string {
	if x == nil {
		return "–"
	}
	return pct(*x)
}

func optMS(x *float64) string { return optF(x, "%.1f") }

func ciPct(iv *Interval) string {
	if iv == nil {
		return "–"
	}
	return fmt.Sprintf("[%.1f, %.1f] %%", 100*iv.Low, 100*iv.High)
}

// ciMean writes the interval of a per-turn mean.
func ciMean(iv *Interval) string {
	if iv == nil {
		return "–"
	}
	return fmt.Sprintf("[%.3f, %.3f]", iv.Low, iv.High)
}

// optDiff writes a difference of the metric: points for a rate, a signed mean otherwise.
func optDiff(metric string, x *float64) string {
	if x == nil {
		return "–"
	}
	if isRate(metric) {
		return signedPoints(*x) + " pt"
	}
	return fmt.Sprintf("%+.3f", *x)
}

// ciDiff writes the interval of a difference of the metric.
func ciDiff(metric string, iv *Interval) string {
	if iv == nil {
		return "–"
	}
	if isRate(metric) {
		return ciPoints(iv)
	}
	return fmt.Sprintf("[%+.3f, %+.3f]", iv.Low, iv.High)
}

func ciPoints(iv *Interval) string {
	if iv == nil {
		return "–"
	}
	return fmt.Sprintf("[%s, %s] pt", signedPoints(iv.Low), signedPoints(iv.High))
}
