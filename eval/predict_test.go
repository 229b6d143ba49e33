package eval

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestSimulatePredict runs a shortened acceptance-3 simulation: proactive surfacing is mostly
// right (20 % of topics are dropped after their lead-in, so 0.8 is the ceiling), catches most
// needs before they come, about 2 turns ahead (lead-ins last 1–3 turns, uniformly), and a
// threshold no prediction clears surfaces nothing.
func TestSimulatePredict(t *testing.T) {
	cfg := DefaultPredictSim()
	cfg.Conversations, cfg.Warmup = 80, 20
	rep := SimulatePredict(cfg)
	if rep.Precision < 0.65 || rep.Precision > 0.85 {
		t.Errorf("precision %.3f, want 0.65–0.85", rep.Precision)
	}
	if rep.BeforeShare < 0.9 {
		t.Errorf("surfaced before needed %.3f, want ≥ 0.9", rep.BeforeShare)
	}
	if rep.MeanLead < 1.8 || rep.MeanLead > 2.2 {
		t.Errorf("mean lead %.2f turns, want ≈ 2", rep.MeanLead)
	}
	if rep.Blocked["below_threshold"] == 0 {
		t.Errorf("no prediction stopped by the threshold: %v", rep.Blocked)
	}
	cfg.Threshold = 1
	if none := SimulatePredict(cfg); none.Surfaced != 0 || none.Before != 0 {
		t.Errorf("threshold 1 surfaced %d", none.Surfaced)
	}
	var buf bytes.Buffer
	rep.Print(&buf)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var back PredictSimReport
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &back); err != nil || back.Hits != rep.Hits {
		t.Errorf("last line %q: %v", lines[len(lines)-1], err)
	}
}
