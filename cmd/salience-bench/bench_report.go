package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/salience-ai/salience/experiment"
	"github.com/salience-ai/salience/internal/app"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/store/sqlite"
)

// benchReport runs `salience-bench report`: an experiment with --events engagement
// outcomes (two surfacings per turn, over --days days, two variants) written into a fresh
// SQLite store, then the end-to-end HTML report timed --runs times: the store's tally,
// Analyze and WriteHTML. The last line is JSON.
func benchReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	events := fs.Int("events", 1_000_000, "engagement outcomes (surfacings with an outcome) in the experiment")
	days := fs.Int("days", 28, "days the experiment has run")
	keep := fs.String("data", "", "write the store in this directory and keep it (default: a temporary one)")
	runs := fs.Int("runs", 5, "reports to time")
	seed := fs.Uint64("seed", 1, "data seed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *events < 2 || *days < 1 || *runs < 1 {
		return fmt.Errorf("bench report: --events ≥ 2, --days ≥ 1, --runs ≥ 1")
	}
	dir := *keep
	if dir == "" {
		d, err := os.MkdirTemp("", "salience-bench-report-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	st, err := sqlite.Open(filepath.Join(dir, app.DatabaseFile), sqlite.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.Rebuild(ctx); err != nil {
		return err
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	end := start.Add(time.Duration(*days) * 24 * time.Hour)
	clock := end
	svc := experiment.NewService(st, experiment.Options{Now: func() time.Time { return clock }})
	clock = start
	e, err := svc.Create(ctx, "bench", &models.Experiment{Name: "bench", Variants: []models.Variant{
		{Name: "control", Share: 0.5}, {Name: "treatment", Share: 0.5}}}, "bench")
	if err != nil {
		return err
	}
	clock = end

	fill := time.Now()
	rng := rand.New(rand.NewPCG(*seed, 15))
	turns := *events / 2
	step := end.Sub(start) / time.Duration(turns)
	const batch = 2000
	for first := 0; first < turns; first += batch {
		n := min(batch, turns-first)
		ds := make([]*models.Decision, n)
		ss := make([]*models.Surfacing, 0, 2*n)
		for i := range n {
			t := first + i
			variant, p := "control", 0.30
			if t%2 == 1 {
				variant, p = "treatment", 0.32
			}
			at := start.Add(time.Duration(t) * step)
			turn := fmt.Sprintf("t%09d", t)
			conv := fmt.Sprintf("c%07d", t/5)
			ds[i] = &models.Decision{Namespace: "bench", TurnID: turn, ConversationID: conv, ConvType: models.ConvOther, Variant: variant,
				Experiment: e.ID, Policy: "bandit", Prob: 1, Surfaced: 2, LatencyMS: 1 + 20*rng.Float64(), At: at}
			for k := range 2 {
				s := &models.Surfacing{ID: fmt.Sprintf("%s-%d", turn, k), Namespace: "bench", ConversationID: conv, TurnID: turn,
					MemoryID: "m", Mode: models.ModeAmbient, Variant: variant, Experiment: e.ID, At: at, OutcomeAt: at.Add(time.Minute)}
				switch u := rng.Float64(); {
				case u < p*0.7:
					s.Outcome = models.EventUsed
				case u < p:
					s.Outcome = models.EventHelpful
				case u < 0.95:
					s.Outcome, s.OutcomeAt = models.EventIgnored, time.Time{}
				default:
					s.Outcome = models.EventDismissed
				}
				ss = append(ss, s)
			}
		}
		if err := st.Update(ctx, func(tx models.Tx) error {
			for _, d := range ds {
				if err := tx.PutDecision(d); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
		if err := st.RecordSurfacings(ctx, ss, nil); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "bench report: %d outcomes in %d turns written in %s\n", 2*turns, turns, time.Since(fill).Round(time.Millisecond))

	var best, total time.Duration
	var size int
	var tallyTook, analyzeTook, htmlTook time.Duration
	for r := range *runs {
		t0 := time.Now()
		in, err := svc.InputAt(ctx, e, end)
		if err != nil {
			return err
		}
		t1 := time.Now()
		rep := experiment.Analyze(in)
		t2 := time.Now()
		cw := &countWriter{}
		if err := experiment.WriteHTML(cw, rep); err != nil {
			return err
		}
		t3 := time.Now()
		took := t3.Sub(t0)
		total += took
		if r == 0 || took < best {
			best, tallyTook, analyzeTook, htmlTook = took, t1.Sub(t0), t2.Sub(t1), t3.Sub(t2)
		}
		size = cw.n
		fmt.Fprintf(stderr, "run %d: %s (tally %s, analyze %s, html %s)\n", r+1, took.Round(time.Millisecond),
			t1.Sub(t0).Round(time.Millisecond), t2.Sub(t1).Round(time.Millisecond), t3.Sub(t2).Round(time.Millisecond))
	}
	out, _ := json.Marshal(map[string]any{
		"events": 2 * turns, "turns": turns, "days": *days, "runs": *runs,
		"best_ms": ms(best), "mean_ms": ms(total / time.Duration(*runs)),
		"best_tally_ms": ms(tallyTook), "best_analyze_ms": ms(analyzeTook), "best_html_ms": ms(htmlTook), "html_bytes": size,
	})
	fmt.Fprintln(stdout, string(out))
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

type countWriter struct{ n int }

func (w *countWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }
