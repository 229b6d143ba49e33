package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/salience-ai/salience/predict"
)

// PredictModel states the synthetic conversations of `salience eval predict`.
const PredictModel = `Synthetic conversations: 20 topics, each named by two concepts (t07a, t07b). A turn is
about one topic and mentions its two concepts plus one noise word (of 60). The next topic is
the current one's first successor with probability 0.55, its second with 0.30, and any topic
at random with 0.15 (noise). Each topic has one memory whose concepts are the topic's; it is
needed in every turn about its topic. The topic-transition model and the usage patterns are
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
	simTopics   = 20
	simNoise    = 60
	simFirst    = 0.55
	simSecond   = 0.30
	simMomentum = 2.0 // one message every 30 s
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
		b := rng.IntN(simTopics - 1)
		for b == a || b == t-0 && false {
			b = rng.IntN(simTopics - 1)
		}
		if b >= t {
			b++
		}
		if b == a {
			b = (a + 1) % simTopics
			if b == t {
				b = (b + 1) % simTopics
			}
		}
		succ[t] = [2]int{a, b}
	}
	concepts := func(t int) []string { return []string{fmt.Sprintf("t%02da", t), fmt.Sprintf("t%02db", t)} }
	mem := func(t int) string { return fmt.Sprintf("mem-t%02d", t) }
	cands := make([]predict.Candidate, simTopics)
	topicOf := map[string]int{}
	for t := range cands {
		cands[t] = predict.Candidate{ID: mem(t), Concepts: concepts(t)}
		for _, c := range concepts(t) {
			topicOf[c] = t
		}
	}
	tr, us := predict.NewTransitions(), predict.NewUsage()
	rep := PredictSimReport{Conversations: cfg.Conversations, Threshold: cfg.Threshold, Blocked: map[string]int{}}
	leadSum := 0
	for conv := range cfg.Conversations {
		scored := conv >= cfg.Warmup
		topic := rng.IntN(simTopics)
		var hist [][]string
		var topics []int
		surfacedAt := map[string]int{} // memory → the turn it was last surfaced proactively
		type shown struct {
			id   string
			turn int
		}
		var shownList []shown
		for turn := range cfg.Turns {
			if turn > 0 {
				switch r := rng.Float64(); {
				case r < simFirst:
					topic = succ[topic][0]
				case r < simFirst+simSecond:
					topic = succ[topic][1]
				default:
					topic = rng.IntN(simTopics)
				}
			}
			cur := append(concepts(topic), fmt.Sprintf("noise%02d", rng.IntN(simNoise)))
			// The memory of this turn's topic is needed now.
			need := mem(topic)
			if scored && turn > 0 {
				rep.Needs++
				if at, ok := surfacedAt[need]; ok && turn-at >= 1 && turn-at <= predict.TransitionWindow {
					rep.Before++
					leadSum += turn - at
				}
			}
			us.Record(need, hist)
			tr.Learn(hist, cur)
			hist = append(hist, cur)
			topics = append(topics, topic)
			// Proactive surfacing after the turn.
			var pool []predict.Candidate
			for _, c := range cands {
				if at, ok := surfacedAt[c.ID]; ok && turn-at <= predict.TransitionWindow {
					continue // not repeated within the window
				}
				if c.ID == need {
					continue // in use right now
				}
				pool = append(pool, c)
			}
			preds := predict.Proactive(tr, us, hist, pool, simMomentum, cfg.Threshold)
			for _, p := range preds {
				if p.Surfaced {
					surfacedAt[p.MemoryID] = turn
					if scored {
						shownList = append(shownList, shown{p.MemoryID, turn})
					}
				} else if scored && p.Confidence > 0 {
					rep.Blocked[p.Blocked]++
				}
			}
			if scored {
				rep.Scored++
			}
		}
		// Precision needs the turns after each surfacing.
		for _, s := range shownList {
			rep.Surfaced++
			for k := 1; k <= predict.TransitionWindow && s.turn+k < len(topics); k++ {
				if mem(topics[s.turn+k]) == s.id {
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
	_ = topicOf
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
