package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/salience-ai/salience/eval"
)

// runEvalPredict runs `salience-bench eval predict`: proactive prediction over seeded synthetic
// conversations with known topic transitions and noise (acceptance 3 of issue 13).
func runEvalPredict(args []string, stdout, stderr io.Writer) error {
	cfg := eval.DefaultPredictSim()
	fs := flag.NewFlagSet("eval predict", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: salience-bench eval predict [flags]\n\n%s\n\nThe last line is JSON.\n\nFlags:\n", eval.PredictModel)
		fs.PrintDefaults()
	}
	fs.IntVar(&cfg.Conversations, "conversations", cfg.Conversations, "synthetic conversations")
	fs.IntVar(&cfg.Turns, "turns", cfg.Turns, "turns per conversation")
	fs.IntVar(&cfg.Warmup, "warmup", cfg.Warmup, "conversations learned from before scoring starts")
	fs.Float64Var(&cfg.Threshold, "threshold", cfg.Threshold, "threshold on the prediction confidence (gate 1)")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "random seed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if cfg.Conversations < 1 || cfg.Turns < 2 || cfg.Warmup < 0 || cfg.Warmup >= cfg.Conversations || !(cfg.Threshold >= 0 && cfg.Threshold <= 1) {
		return fmt.Errorf("eval predict: --conversations ≥ 1, --turns ≥ 2, 0 ≤ --warmup < --conversations, 0 ≤ --threshold ≤ 1")
	}
	eval.SimulatePredict(cfg).Print(stdout)
	return nil
}
