package eval_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/salience-ai/salience/engagement"
	"github.com/salience-ai/salience/eval"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/store/sqlite"
)

// TestNatural plays the tiny conversation as a bot does: every dialog turn is a recall and
// then a stored memory, every question is asked once when its evidence has been said, the
// held half is scored on both sides, and only the reporting side sends events.
func TestNatural(t *testing.T) {
	ctx := context.Background()
	c, err := eval.Parse([]byte(tiny))
	if err != nil {
		t.Fatal(err)
	}
	c.Name = "tiny"
	with, stWith := openEngine(t, "with")
	silent, stSilent := openEngine(t, "silent")
	rep, err := eval.Natural(ctx, with, silent, []*eval.Conversation{c}, nil)
	if err != nil {
		t.Fatal(err)
	}
	held := 0
	for i, q := range c.QA {
		if eval.Evaluable(q) && eval.Held(c, i, q) {
			held++
		}
	}
	for name, s := range map[string]*eval.NaturalSide{"reporting": &rep.Reporting, "silent": &rep.Silent} {
		// 6 dialog turns, 3 scored questions; the conversation's 6 turns split 3 and 3.
		if s.Turns != 9 || s.DialogTurns != [2]int{3, 3} {
			t.Errorf("%s: %d turns, dialog turns %v; want 9, [3 3]", name, s.Turns, s.DialogTurns)
		}
		if s.Held.N != held {
			t.Errorf("%s: %d held questions scored, want %d", name, s.Held.N, held)
		}
		if r := s.MeanReward(); r < engagement.RewardIgnored || r > engagement.RewardUsed {
			t.Errorf("%s: reward per turn %v outside [ignored, used]", name, r)
		}
	}
	// Every memory stored once on each side, so both sides saw the same turns.
	for name, st := range map[string]*sqlite.Store{"with": stWith, "silent": stSilent} {
		ms, _, err := st.FindMemories(ctx, models.MemoryFilter{Namespace: eval.Namespace(c), Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) != 6 {
			t.Errorf("%s: %d memories stored, want 6", name, len(ms))
		}
	}
	if rep.Events == 0 {
		t.Error("the reporting bot sent no events")
	}
	var buf bytes.Buffer
	rep.Print(&buf)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var last map[string]float64
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		t.Fatalf("last line is not JSON: %v\n%s", err, buf.String())
	}
	for _, k := range []string{"hit@10_reporting", "hit@10_silent", "reward_reporting", "reward_silent", "dialog_precision_reporting"} {
		if _, ok := last[k]; !ok {
			t.Errorf("JSON line lacks %s: %s", k, lines[len(lines)-1])
		}
	}
}
