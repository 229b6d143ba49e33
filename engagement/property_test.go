package engagement

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

var allEvents = []models.EventType{models.EventUsed, models.EventHelpful, models.EventIgnored, models.EventDismissed}

// run applies the event sequence encoded in ops (two bits per event type, the rest of the
// byte picks a context and whether the edge already exists) to one memory and one edge and
// checks the invariants after every step.
func run(t *testing.T, start, edgeStart float64, ops []byte) {
	t.Helper()
	r := DefaultRules()
	m := &models.Memory{Confidence: start}
	e := &models.Edge{From: "m", To: "c:x", Type: models.EdgeMentions, Weight: edgeStart}
	found := true
	now := at
	for i, op := range ops {
		ev := allEvents[op&3]
		ctx := []string{string(rune('a' + op>>2&7)), "shared"}
		prev := m.Confidence
		r.ApplyToMemory(m, ev, ctx, now)
		if !(m.Confidence >= 0 && m.Confidence <= 1) {
			t.Fatalf("step %d (%s): confidence %v out of [0,1]", i, ev, m.Confidence)
		}
		if !ev.Positive() && prev >= 0 && prev <= 1 && m.Confidence > prev {
			t.Fatalf("step %d (%s): negative feedback raised confidence %v → %v", i, ev, prev, m.Confidence)
		}
		if ev.Positive() && prev >= 0 && prev <= 1 && m.Confidence < prev {
			t.Fatalf("step %d (%s): positive feedback lowered confidence %v → %v", i, ev, prev, m.Confidence)
		}
		if len(m.IrrelevantContexts) > r.MaxIrrelevantContexts {
			t.Fatalf("step %d: %d irrelevant contexts", i, len(m.IrrelevantContexts))
		}
		if len(r.EdgesFor("ns", "m", ev, ctx, nil)) > 0 {
			if op&32 != 0 {
				found = false // pretend the edge was deleted meanwhile
			}
			e = r.Strengthen(e, found, now)
			found = true
			if !(e.Weight >= 0 && e.Weight <= 1) {
				t.Fatalf("step %d: edge weight %v out of [0,1]", i, e.Weight)
			}
		}
		now = now.Add(time.Minute)
	}
}

func TestPropertyBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		ops := make([]byte, rng.IntN(200))
		for i := range ops {
			ops[i] = byte(rng.UintN(256))
		}
		run(t, rng.Float64(), rng.Float64(), ops)
	}
}

func FuzzEventSequence(f *testing.F) {
	f.Add(0.5, 0.3, []byte{0, 1, 2, 3})
	f.Add(0.25, 0.0, []byte{2, 2, 2, 2, 2})
	f.Add(1.0, 1.0, []byte{0, 0, 0, 1, 1, 1, 32, 33})
	f.Add(0.0, 0.95, []byte{3, 7, 11, 15, 19, 23, 27, 31, 35, 39, 43, 47})
	f.Fuzz(func(t *testing.T, start, edgeStart float64, ops []byte) {
		// Stored values are in [0,1]; the invariants are about keeping them there.
		if !(start >= 0 && start <= 1 && edgeStart >= 0 && edgeStart <= 1) {
			t.Skip()
		}
		run(t, start, edgeStart, ops)
	})
}
