package eval

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/salience-ai/salience/predict"
)

// TestSimMean checks the stated reward model with literal values: q = 0.6 at the best arm,
// 0.15 less per step, floor 0.05; reward 0.2 + 0.6q.
func TestSimMean(t *testing.T) {
	for _, c := range []struct{ arm, best, q, mean float64 }{
		{0.2, 0.2, 0.6, 0.56},
		{0.3, 0.2, 0.45, 0.47},
		{0.1, 0.4, 0.15, 0.29},
		{0.1, 0.5, 0.05, 0.23}, // 0.6 − 0.6 = 0 → floor
	} {
		if q, m := simUse(c.arm, c.best), simMean(c.arm, c.best); math.Abs(q-c.q) > 1e-12 || math.Abs(m-c.mean) > 1e-12 {
			t.Errorf("arm %v best %v: q %v mean %v, want %v %v", c.arm, c.best, q, m, c.q, c.mean)
		}
	}
}

// TestSimulateBandit runs a shortened acceptance-1 simulation (4 runs instead of 20): every
// type picks its best threshold most of the time before and after the switch, beats the best
// fixed arm in hindsight, and the report's last line is JSON carrying the same figures.
func TestSimulateBandit(t *testing.T) {
	cfg := DefaultBanditSim()
	cfg.Runs = 4
	rep := SimulateBandit(cfg)
	if len(rep.Types) != 5 {
		t.Fatalf("%d types, want 5", len(rep.Types))
	}
	for _, r := range rep.Types {
		for w, s := range r.Share {
			// 20 runs give ≥ 0.83 for every type; 4 runs are noisier.
			if s < 0.75 {
				t.Errorf("%s: share of optimal picks %.3f in window %v, want ≥ 0.75", r.Type, s, cfg.Windows[w])
			}
		}
		// No fixed arm is best on both sides of the switch, so following it beats every one.
		if r.Regret >= 0 {
			t.Errorf("%s: regret %.1f against the best fixed arm, want negative", r.Type, r.Regret)
		}
		if r.Dynamic <= 0 || r.Dynamic > 0.1*float64(cfg.Turns) {
			t.Errorf("%s: dynamic regret %.1f, want in (0, %d]", r.Type, r.Dynamic, cfg.Turns/10)
		}
	}
	// The best fixed arm of debugging (0.2 → 0.4) is either side's best, earning 0.56 on one
	// half of the turns and 0.38 (two steps off) on the other: 0.47 per turn.
	if d := rep.Types[0]; math.Abs(d.FixedMean-0.47) > 1e-9 {
		t.Errorf("debugging best fixed arm %v earns %v per turn, want 0.47", d.BestFixed, d.FixedMean)
	}
	// A stationary bandit does not follow the switch.
	st := cfg
	st.Bandit = predict.Bandit{Gamma: 1, PriorStrength: predict.DefaultPriorStrength}
	if srep := SimulateBandit(st); srep.Types[0].Share[1] > 0.5 {
		t.Errorf("stationary bandit picks the new best arm %.3f of the time after the switch; the test cannot fail", srep.Types[0].Share[1])
	}
	var buf bytes.Buffer
	rep.Print(&buf)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var back BanditSimReport
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &back); err != nil {
		t.Fatalf("last line is not JSON: %v", err)
	}
	if back.MinShare != rep.MinShare || len(back.Types) != 5 || back.Gamma != predict.DefaultGamma {
		t.Errorf("JSON line %+v does not match the report", back)
	}
}
