package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/predict"
)

// BanditRewardModel states the simulator's reward model; `salience eval bandit --help`
// prints it.
const BanditRewardModel = `Reward model: every turn of a conversation type the bandit picks a threshold
arm; the simulated bot is shown 3 memories and uses each independently with probability
q(arm) = max(0.05, 0.6 − 1.5·|arm − best|), i.e. 0.6 at the type's best threshold and 0.15
less per arm step of 0.1; a used memory earns 0.8 and an ignored one 0.2 (docs/design.md#prediction-and-thresholds), so the
turn's reward is the mean 0.2 + 0.6·(used/3) — expected 0.56 at the best arm, 0.47 one
step away. Thresholds are on p_use (arms 0.1 … 0.5, the source's 0.5 … 0.9 less 0.4). The
best threshold differs by type and changes at the switch turn: debugging 0.2→0.4,
help-seeking 0.3→0.1, exploration 0.4→0.2, casual 0.5→0.3, other 0.1→0.5.
Each type has its own bandit (priors centred on the source defaults), runs its own turns,
and is scored over the same windows.`

// BanditBest are the simulated best thresholds per conversation type, before and after the
// switch (see BanditRewardModel). Some differ from the source defaults from the start, so the
// prior has to be overruled, not merely confirmed.
var BanditBest = map[string][2]float64{
	models.ConvDebugging:   {0.2, 0.4},
	models.ConvHelpSeeking: {0.3, 0.1},
	models.ConvExploration: {0.4, 0.2},
	models.ConvCasual:      {0.5, 0.3},
	models.ConvOther:       {0.1, 0.5},
}

// Simulator constants (see BanditRewardModel).
const (
	simShown    = 3    // memories shown per turn
	simPeakUse  = 0.6  // use probability at the best arm
	simUseSlope = 1.5  // use probability lost per unit of threshold distance
	simMinUse   = 0.05 // floor of the use probability
)

// simUse is the probability that the bot uses a memory shown under threshold arm when best
// is the type's best threshold.
func simUse(arm, best float64) float64 {
	return max(simMinUse, simPeakUse-simUseSlope*math.Abs(arm-best))
}

// simMean is the expected turn reward of an arm: 0.2 + 0.6·q (used 0.8, ignored 0.2).
func simMean(arm, best float64) float64 {
	return RewardIgnored + (RewardUsed-RewardIgnored)*simUse(arm, best)
}

// Event rewards of docs/design.md#prediction-and-thresholds as the simulator uses them (engagement.Reward holds the same
// values; eval keeps its own copy so the simulator states its model in one place).
const (
	RewardUsed    = 0.8
	RewardIgnored = 0.2
)

// BanditSimConfig sets up `salience eval bandit`.
type BanditSimConfig struct {
	Bandit   predict.Bandit
	Turns    int    // per type; 10,000
	SwitchAt int    // 5,000
	Runs     int    // independent seeded runs averaged
	Seed     uint64 // run r uses PCG(Seed, r)
	// Windows over which the share of optimal picks is reported, [from, to) in turns.
	Windows [][2]int
}

// DefaultBanditSim is the configuration of acceptance 1: 10,000 turns per type, switch at
// 5,000, 20 runs, windows 4,500–5,000 and 6,000–6,500.
func DefaultBanditSim() BanditSimConfig {
	return BanditSimConfig{
		Bandit: predict.DefaultBandit(), Turns: 10000, SwitchAt: 5000, Runs: 20, Seed: 1,
		Windows: [][2]int{{4500, 5000}, {6000, 6500}},
	}
}

// BanditTypeResult is one conversation type's outcome, averaged over runs.
type BanditTypeResult struct {
	Type       string    `json:"type"`
	Best       []float64 `json:"best"`        // the best threshold before and after the switch
	Share      []float64 `json:"share"`       // share of optimal picks per window
	Reward     float64   `json:"mean_reward"` // mean expected reward per turn of the arms picked
	BestFixed  float64   `json:"best_fixed"`  // the best fixed arm in hindsight
	Regret     float64   `json:"regret"`      // vs the best fixed arm in hindsight, expected reward
	Dynamic    float64   `json:"dynamic_regret"`
	FixedMean  float64   `json:"best_fixed_reward"` // its mean reward per turn
	OracleMean float64   `json:"oracle_reward"`     // the per-turn best arm's
}

// BanditSimReport is what `salience eval bandit` prints.
type BanditSimReport struct {
	Gamma         float64            `json:"gamma"`
	PriorStrength float64            `json:"prior_strength"`
	Turns         int                `json:"turns"`
	SwitchAt      int                `json:"switch_at"`
	Runs          int                `json:"runs"`
	Windows       [][2]int           `json:"windows"`
	Types         []BanditTypeResult `json:"types"`
	MinShare      float64            `json:"min_share"` // the lowest share over types and windows
}

// SimulateBandit runs the threshold bandit against the simulated bots of BanditRewardModel.
// Regret is in expected reward (the mean of the arm picked, not the noisy draw), so it
// measures the decisions, not the luck of the simulated bot.
func SimulateBandit(cfg BanditSimConfig) BanditSimReport {
	rep := BanditSimReport{Gamma: cfg.Bandit.Gamma, PriorStrength: cfg.Bandit.PriorStrength,
		Turns: cfg.Turns, SwitchAt: cfg.SwitchAt, Runs: cfg.Runs, Windows: cfg.Windows, MinShare: 1}
	types := []string{models.ConvDebugging, models.ConvHelpSeeking, models.ConvExploration, models.ConvCasual, models.ConvOther}
	for ti, typ := range types {
		best := BanditBest[typ]
		res := BanditTypeResult{Type: typ, Best: best[:], Share: make([]float64, len(cfg.Windows))}
		// Expected reward per arm summed over the turns, for the best fixed arm in hindsight.
		fixed := make([]float64, len(predict.Arms))
		oracle := 0.0
		for t := range cfg.Turns {
			b := best[0]
			if t >= cfg.SwitchAt {
				b = best[1]
			}
			top := 0.0
			for k, a := range predict.Arms {
				m := simMean(a, b)
				fixed[k] += m
				top = max(top, m)
			}
			oracle += top
		}
		kFixed := 0
		for k := range fixed {
			if fixed[k] > fixed[kFixed] {
				kFixed = k
			}
		}
		res.BestFixed = predict.Arms[kFixed]
		got := 0.0
		for run := range cfg.Runs {
			rng := rand.New(rand.NewPCG(cfg.Seed, uint64(ti)<<32|uint64(run)))
			arms := cfg.Bandit.NewArms(typ)
			for t := range cfg.Turns {
				b := best[0]
				if t >= cfg.SwitchAt {
					b = best[1]
				}
				k := cfg.Bandit.Pick(arms, rng)
				a := predict.Arms[k]
				got += simMean(a, b)
				for w, win := range cfg.Windows {
					if t >= win[0] && t < win[1] && math.Abs(a-b) < 1e-9 {
						res.Share[w]++
					}
				}
				used := 0
				q := simUse(a, b)
				for range simShown {
					if rng.Float64() < q {
						used++
					}
				}
				r := RewardIgnored + (RewardUsed-RewardIgnored)*float64(used)/simShown
				cfg.Bandit.Update(arms, k, r)
			}
		}
		runs := float64(cfg.Runs)
		for w, win := range cfg.Windows {
			res.Share[w] /= runs * float64(win[1]-win[0])
			rep.MinShare = min(rep.MinShare, res.Share[w])
		}
		got /= runs
		res.Reward = got / float64(cfg.Turns)
		res.FixedMean = fixed[kFixed] / float64(cfg.Turns)
		res.OracleMean = oracle / float64(cfg.Turns)
		res.Regret = fixed[kFixed] - got
		res.Dynamic = oracle - got
		rep.Types = append(rep.Types, res)
	}
	return rep
}

// Print writes the report as a table, the last line JSON.
func (r BanditSimReport) Print(w io.Writer) {
	fmt.Fprintf(w, "Threshold bandit: discounted Thompson sampling, γ = %g, prior strength %g (centred on the source defaults)\n",
		r.Gamma, r.PriorStrength)
	fmt.Fprintf(w, "%d turns per type, best threshold switches at turn %d, %d runs\n\n", r.Turns, r.SwitchAt, r.Runs)
	fmt.Fprintf(w, "%-13s %-9s", "type", "best")
	for _, win := range r.Windows {
		fmt.Fprintf(w, " %11s", fmt.Sprintf("opt %d–%d", win[0], win[1]))
	}
	fmt.Fprintf(w, " %8s %8s %10s %8s %8s\n", "reward", "fixed", "fixed rew", "regret", "dynamic")
	for _, t := range r.Types {
		fmt.Fprintf(w, "%-13s %-9s", t.Type, fmt.Sprintf("%.1f→%.1f", t.Best[0], t.Best[1]))
		for _, s := range t.Share {
			fmt.Fprintf(w, " %11.3f", s)
		}
		fmt.Fprintf(w, " %8.4f %8.1f %10.4f %8.1f %8.1f\n", t.Reward, t.BestFixed, t.FixedMean, t.Regret, t.Dynamic)
	}
	fmt.Fprintln(w, "\nregret: expected reward lost against the best fixed arm in hindsight (negative: the bandit beat it by following the switch); dynamic: against the best arm of every turn")
	b, _ := json.Marshal(r)
	fmt.Fprintln(w, string(b))
}

// Pass reports whether every type's share of optimal picks reaches min in every window.
func (r BanditSimReport) Pass(minShare float64) bool {
	return len(r.Types) > 0 && !slices.ContainsFunc(r.Types, func(t BanditTypeResult) bool {
		return slices.ContainsFunc(t.Share, func(s float64) bool { return !(s >= minShare) })
	})
}
