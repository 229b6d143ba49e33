package experiment

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"
	"strings"
)

// WriteJSON writes the report as indented JSON. The report holds no NaN or infinity (an
// undefined statistic is a nil pointer, omitted), and encoding/json refuses them anyway, so
// a bug could only surface as an error, never as invalid JSON.
func WriteJSON(w io.Writer, r Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// csvHeader is the CSV's columns: the variant's counts and rates, then its comparison with
// the control on the primary metric (empty on the control's row and wherever a statistic is
// undefined).
var csvHeader = []string{
	"experiment_id", "variant", "is_control", "share", "conversations", "turns", "empty_turns", "surfaced",
	"used", "helpful", "ignored", "dismissed",
	"reward_per_turn", "reward_per_turn_low", "reward_per_turn_high",
	"used_per_turn", "used_per_turn_low", "used_per_turn_high",
	"surfaced_per_turn", "surfaced_per_turn_low", "surfaced_per_turn_high",
	"precision", "precision_low", "precision_high", "dismissal_rate", "dismissal_rate_low", "dismissal_rate_high",
	"latency_p50_ms", "latency_p95_ms",
	"metric", "difference", "difference_low", "difference_high", "z", "p",
	"relative_lift", "relative_lift_se", "relative_lift_p", "chance_to_win",
	"prob_beat_control", "expected_loss_variant", "expected_loss_control",
	"sequential_p", "sequential_half_width", "outcome",
}

// WriteCSV writes one row per variant, header row first.
func WriteCSV(w io.Writer, r Report) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	byVariant := make(map[string]Comparison, len(r.Comparisons))
	for _, c := range r.Comparisons {
		byVariant[c.Variant] = c
	}
	for i, v := range r.Variants {
		row := []string{
			csvText(r.ExperimentID), csvText(v.Variant), strconv.FormatBool(i == 0), num(v.Share),
			strconv.Itoa(v.Conversations), strconv.Itoa(v.Turns), strconv.Itoa(v.EmptyTurns), strconv.Itoa(v.Surfaced),
			strconv.Itoa(v.Used), strconv.Itoa(v.Helpful), strconv.Itoa(v.Ignored), strconv.Itoa(v.Dismissed),
			opt(v.RewardPerTurn), lowOf(v.RewardPerTurnCI), highOf(v.RewardPerTurnCI),
			opt(v.UsedPerTurn), lowOf(v.UsedPerTurnCI), highOf(v.UsedPerTurnCI),
			opt(v.SurfacedPerTurn), lowOf(v.SurfacedPerTurnCI), highOf(v.SurfacedPerTurnCI),
			opt(v.Precision), lowOf(v.PrecisionCI), highOf(v.PrecisionCI),
			opt(v.DismissalRate), lowOf(v.DismissalRateCI), highOf(v.DismissalRateCI),
			opt(v.LatencyP50MS), opt(v.LatencyP95MS),
		}
		c, ok := byVariant[v.Variant]
		if i == 0 || !ok {
			row = append(row, make([]string, len(csvHeader)-len(row))...)
		} else {
			row = append(row, c.Metric,
				opt(c.Difference), lowOf(c.DifferenceCI), highOf(c.DifferenceCI), opt(c.Z), opt(c.P),
				opt(c.RelativeLift), opt(c.RelativeLiftSE), opt(c.RelativeLiftP), opt(c.ChanceToWin),
				opt(c.ProbBeatControl), opt(c.ExpectedLossVariant), opt(c.ExpectedLossControl),
				opt(c.SequentialP), opt(c.SequentialHalfWidth), c.Outcome,
			)
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// csvText defuses a cell a spreadsheet would run as a formula (one starting with =, +, −,
// @, tab or carriage return) by prefixing an apostrophe, as OWASP advises for CSV exports:
// variant names are typed by operators, and the CSV is meant to be opened in a spreadsheet.
func csvText(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// num writes x in the shortest form that reads back to the same float64.
func num(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

func opt(x *float64) string {
	if x == nil {
		return ""
	}
	return num(*x)
}

func lowOf(iv *Interval) string {
	if iv == nil {
		return ""
	}
	return num(iv.Low)
}

func highOf(iv *Interval) string {
	if iv == nil {
		return ""
	}
	return num(iv.High)
}
