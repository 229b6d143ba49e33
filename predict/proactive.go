package predict

import (
	"slices"
	"sort"
)

// ReasonLimit is why a prediction that passed every gate was not surfaced: MaxProactive
// better ones were.
const ReasonLimit = "over_limit"

// MinPatternShare is the share of a memory's uses a concept must have preceded to count as a
// learned trigger of it (Usage.Triggers).
const MinPatternShare = 0.3

// Candidate is a memory proactive surfacing may propose: its concepts (what topics lead to
// it), its own triggers, and the dismissal state gate 4 and the cooldown read.
type Candidate struct {
	ID               string
	Concepts         []string
	Triggers         []string
	RecentDismissals float64
	InCooldown       bool
}

// Prediction is proactive surfacing's verdict on one candidate.
type Prediction struct {
	MemoryID   string   `json:"memory_id"`
	Confidence float64  `json:"confidence"` // P(a concept of the memory comes up within the window)
	Topic      string   `json:"topic"`      // the predicted concept that leads to it
	From       string   `json:"from"`       // the recent concept that predicts the topic
	Matches    []string `json:"matches"`    // context concepts matching its triggers (own or learned)
	Lead       float64  `json:"lead_turns,omitempty"`
	Surfaced   bool     `json:"surfaced"`
	Blocked    string   `json:"blocked_by,omitempty"` // the gate that stopped it (Reason*)
}

// Proactive judges candidates for one turn (docs/design.md#prediction-and-thresholds): recent are the concept sets of the
// conversation's latest turns, oldest first (the last is the current turn). A candidate's
// confidence is the best probability among the predicted topics that are its concepts; its
// trigger matches are the concepts of the last Window turns found among its own triggers and
// the triggers its usage pattern learned. Each passes ProactiveGates with the threshold and
// momentum, the best MaxProactive are surfaced; every verdict is returned, surfaced first,
// then by confidence, so a caller can explain which gate stopped the others.
func Proactive(tr *Transitions, us *Usage, recent [][]string, cands []Candidate, momentum, threshold float64) []Prediction {
	if len(recent) == 0 {
		return nil
	}
	topics := tr.Predict(recent[len(recent)-1], 0)
	byTopic := make(map[string]Topic, len(topics))
	for _, t := range topics {
		byTopic[t.Concept] = t
	}
	w := tr.window()
	ctx := recent
	if len(ctx) > w {
		ctx = ctx[len(ctx)-w:]
	}
	gates := ProactiveGates()
	out := make([]Prediction, 0, len(cands))
	for _, c := range cands {
		p := Prediction{MemoryID: c.ID}
		for _, concept := range c.Concepts {
			if t, ok := byTopic[concept]; ok && t.P > p.Confidence {
				p.Confidence, p.Topic, p.From = t.P, t.Concept, t.From
			}
		}
		trig := c.Triggers
		if us != nil {
			trig = append(slices.Clip(trig), us.Triggers(c.ID, MinPatternShare)...)
			p.Lead = us.Lead(c.ID, MinPatternShare)
		}
		for _, turn := range ctx {
			for _, x := range turn {
				if slices.Contains(trig, x) && !slices.Contains(p.Matches, x) {
					p.Matches = append(p.Matches, x)
				}
			}
		}
		ok, reason := gates.Check(threshold, Signals{Score: p.Confidence, Triggers: len(p.Matches), Momentum: momentum,
			RecentDismissals: c.RecentDismissals, InCooldown: c.InCooldown})
		p.Surfaced, p.Blocked = ok, reason
		out = append(out, p)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Surfaced != out[j].Surfaced {
			return out[i].Surfaced
		}
		if out[i].Confidence != out[j].Confidence {
			return out[i].Confidence > out[j].Confidence
		}
		return out[i].MemoryID < out[j].MemoryID
	})
	for i := MaxProactive; i < len(out) && out[i].Surfaced; i++ {
		out[i].Surfaced, out[i].Blocked = false, ReasonLimit
	}
	return out
}
