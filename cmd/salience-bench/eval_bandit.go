package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/salience-ai/salience/eval"
)

// runEvalBandit runs `salience-bench eval bandit`: the threshold bandit against simulated bots whose
// best threshold differs by conversation type and changes half-way (acceptance 1 of issue 13).
// It fails when a type's share of optimal picks falls below --min-share in a window.
func runEvalBandit(args []string, stdout, stderr io.Writer) error {
	cfg := eval.DefaultBanditSim()
	fs := flag.NewFlagSet("eval bandit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: salience-bench eval bandit [flags]\n\n%s\n\nPrinted per type: the share of optimal picks over turns %d–%d and %d–%d, the mean\nreward per turn, the best fixed arm in hindsight and the regret against it, and the\ndynamic regret (against the best arm of every turn). The last line is JSON.\n\nFlags:\n",
			eval.BanditRewardModel, cfg.Windows[0][0], cfg.Windows[0][1], cfg.Windows[1][0], cfg.Windows[1][1])
		fs.PrintDefaults()
	}
	fs.IntVar(&cfg.Runs, "runs", cfg.Runs, "independent seeded runs averaged")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "random seed")
	fs.Float64Var(&cfg.Bandit.Gamma, "gamma", cfg.Bandit.Gamma, "discount per update (1 = stationary)")
	fs.Float64Var(&cfg.Bandit.PriorStrength, "prior-strength", cfg.Bandit.PriorStrength, "weight of the prior in pseudo-turns")
	minShare := fs.Float64("min-share", 0.8, "fail when a type's share of optimal picks is below this in a window")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if cfg.Runs < 1 || !(cfg.Bandit.Gamma > 0 && cfg.Bandit.Gamma <= 1) || !(cfg.Bandit.PriorStrength > 0) {
		return fmt.Errorf("eval bandit: --runs ≥ 1, 0 < --gamma ≤ 1 and --prior-strength > 0")
	}
	rep := eval.SimulateBandit(cfg)
	rep.Print(stdout)
	if !rep.Pass(*minShare) {
		return fmt.Errorf("eval bandit: a type's share of optimal picks is %.3f, below %.2f", rep.MinShare, *minShare)
	}
	return nil
}
