package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/salience-ai/salience/predict"
)

// PredictModel states the synthetic conversations of `salience eval predict`.
const PredictModel = `Synthetic conversations: 20 topics, each named by three concepts (t07a, t07b, t07c). A topic
is led in for 1–3 turns (uniformly) that mention its first two concepts, then comes the turn
that needs the topic's memory and mentions its third concept; 20 % of topics are dropped
after the lead-in (noise: their memory is not needed). Every turn also mentions one noise word
of 60. The next topic is the current one's first successor with probability 0.55, its second
with 0.30, and any topic at random with 0.15 (noise). Each topic has one memory whose concepts
are the topic's. The topic-transition model and the usage patterns are
learned online from the conversations as they go (each memory's use is recorded when it is
needed); proactive surfacing runs after every turn through the four gates (threshold on the
prediction confidence, ≥ 2 trigger matches from the learned usage pattern, momentum ≤ 5 per
minute with one message every 30 s, recent dismissals ≤ 2), at most 3 per turn, not
repeating a memory surfaced in the last 3 turns. Scored after the warm-up conversations:
precision = surfaced memories needed within the next 3 turns / surfaced; surfaced before
needed = needs whose memory was surfaced proactively 1–3 turns earlier / needs; lead time =
turns from that first surfacing to the need.`

// PredictSimConfig sets up `salience eval predict`.
type PredictSimConfig struct {
	Conversations int     // 300
	Turns         int     // per conversation; 30
	Warmup        int     // conversations learned from before scoring; 50
	Threshold     float64 // on the prediction confidence; 0.5
	Seed          uint64
}

// DefaultPredictSim is the configuration of acceptance 3.
func DefaultPredictSim() PredictSimConfig {
	return PredictSimConfig{Conversations: 300, Turns: 30, Warmup: 50, Threshold: 0.5, Seed: 1}
}

// PredictSimReport is what `salience eval predict` prints.
type PredictSimReport struct {
	Conversations int            `json:"conversations"`
	Scored        int            `json:"scored_turns"`
	Threshold     float64        `json:"threshold"`
	Surfaced      int            `json:"surfaced"`
	Hits          int            `json:"hits"`
	Precision     float64        `json:"precision"`
	Needs         int            `json:"needs"`
	Before        int            `json:"surfaced_before"`
	BeforeShare   float64        `json:"surfaced_before_share"`
	MeanLead      float64        `json:"mean_lead_turns"`
	PerTurn       float64        `json:"surfaced_per_turn"`
	Blocked       map[string]int `json:"blocked"` // predictions stopped, by gate
}

const (
	simTopics    = 20
	simNoise     = 60
	simFirst     = 0.55
	simSecond    = 0.30
	simMomentum  = 2.0 // one message every 30 s
	simMaxLeadIn = 3   // turns a topic is led in before its memory is needed, at most
	simDropped   = 0.2 // share of topics dropped after their lead-in: their memory is never needed
)

// SimulatePredict runs proactive prediction over seeded synthetic conversations (PredictModel).
func SimulatePredict(cfg PredictSimConfig) PredictSimReport {
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	succ := make([][2]int, simTopics)
	for t := range succ {
		a := rng.IntN(simTopics - 1)
		if a >= t {
			a++
		}
		b := a
		for b == a || b == t {
			b = rng.IntN(simTopics)
		}
		succ[t] = [2]int{a, b}
	}
	concepts := func(t int) []string {
		return []string{fmt.Sprintf("t%02da", t), fmt.Sprintf("t%02db", t), fmt.Sprintf("t%02dc", t)}
	}
	mem := func(t int) string { return fmt.Sprintf("mem-t%02d", t) }
	cands := make([]predict.Candidate, simTopics)
	memIndex := map[string]int{}
	for t := range cands {
		cands[t] = predict.Candidate{ID: mem(t), Concepts: concepts(t)}
		memIndex[mem(t)] = t
	}
	tr, us := predict.NewTransitions(), predict.NewUsage()
	rep := PredictSimReport{Conversations: cfg.Conversations, Threshold: cfg.Threshold, Blocked: map[string]int{}}
	leadSum := 0
	for conv := range cfg.Conversations {
		scored := conv >= cfg.Warmup
		var (
			hist       [][]string         // concept sets of the turns so far
			needs      []string           // the memory each turn needed ("" none)
			surfacedAt = map[string]int{} // memory → the turn it was last surfaced proactively
			shown      [][2]int           // (topic's memory index, turn) of each scored surfacing
		)
		// step plays one turn: the need is scored against what was surfaced before, the
		// models learn the turn, then proactive surfacing runs after it.
		step := func(cur []string, need int) {
			cur = append(cur, fmt.Sprintf("noise%02d", rng.IntN(simNoise)))
			t := len(hist)
			id := ""
			if need >= 0 {
				id = mem(need)
				if scored {
					rep.Needs++
					if at, ok := surfacedAt[id]; ok && t-at >= 1 && t-at <= predict.TransitionWindow {
						rep.Before++
						leadSum += t - at
					}
				}
				us.Record(id, hist)
			}
			tr.Learn(hist, cur)
			hist = append(hist, cur)
			needs = append(needs, id)
			var pool []predict.Candidate
			for _, c := range cands {
				if at, ok := surfacedAt[c.ID]; (ok && t-at <= predict.TransitionWindow) || c.ID == id {
					continue // not repeated within the window, nor proposed while in use
				}
				pool = append(pool, c)
			}
			for _, p := range predict.Proactive(tr, us, hist, pool, simMomentum, cfg.Threshold) {
				switch {
				case p.Surfaced:
					surfacedAt[p.MemoryID] = t
					if scored {
						shown = append(shown, [2]int{memIndex[p.MemoryID], t})
					}
				case scored && p.Confidence > 0:
					rep.Blocked[p.Blocked]++
				}
			}
			if scored {
				rep.Scored++
			}
		}
		topic := rng.IntN(simTopics)
		for len(hist) < cfg.Turns {
			// The topic is led in for 1–3 turns (its first two concepts), then comes the
			// turn that needs its memory (its third concept) — unless the conversation drops
			// the topic first.
			cs := concepts(topic)
			for range 1 + rng.IntN(simMaxLeadIn) {
				step(cs[:2:2], -1)
			}
			if rng.Float64() >= simDropped {
				step(cs[2:], topic)
			}
			switch r := rng.Float64(); {
			case r < simFirst:
				topic = succ[topic][0]
			case r < simFirst+simSecond:
				topic = succ[topic][1]
			default:
				topic = rng.IntN(simTopics)
			}
		}
		for _, s := range shown {
			rep.Surfaced++
			for k := 1; k <= predict.TransitionWindow && s[1]+k < len(needs); k++ {
				if needs[s[1]+k] == mem(s[0]) {
					rep.Hits++
					break
				}
			}
		}
	}
	if rep.Surfaced > 0 {
		rep.Precision = float64(rep.Hits) / float64(rep.Surfaced)
	}
	if rep.Needs > 0 {
		rep.BeforeShare = float64(rep.Before) / float64(rep.Needs)
	}
	if rep.Before > 0 {
		rep.MeanLead = float64(leadSum) / float64(rep.Before)
	}
	if rep.Scored > 0 {
		rep.PerTurn = float64(rep.Surfaced) / float64(rep.Scored)
	}
	return rep
}

// Print writes the report, the last line JSON.
func (r PredictSimReport) Print(w io.Writer) {
	fmt.Fprintf(w, "Proactive prediction: %d synthetic conversations, %d scored turns, threshold %.2f\n", r.Conversations, r.Scored, r.Threshold)
	fmt.Fprintf(w, "precision of proactive surfacing     %.3f  (%d of %d surfaced were needed within 3 turns)\n", r.Precision, r.Hits, r.Surfaced)
	fmt.Fprintf(w, "needed memories surfaced before      %.3f  (%d of %d needs)\n", r.BeforeShare, r.Before, r.Needs)
	fmt.Fprintf(w, "mean lead time                       %.2f turns (target 2–3)\n", r.MeanLead)
	fmt.Fprintf(w, "surfaced per turn                    %.2f\n", r.PerTurn)
	fmt.Fprintf(w, "stopped by gate                      %v\n", r.Blocked)
	b, _ := json.Marshal(r)
	fmt.Fprintln(w, string(b))
}
