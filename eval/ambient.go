package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/salience-ai/salience/engagement"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/recall"
)

// AmbientPolicy is how the ambient replay reports: the bot used each surfaced evidence turn
// and ignored every other surfaced memory; a turn's reward is the one of docs/design.md#prediction-and-thresholds (the mean of its
// events' rewards, 0.4 when it surfaced nothing).
const AmbientPolicy = "each question asked in ambient mode as the latest message, in order; used for surfaced evidence turns, ignored for the rest, reported through the engagement path and fed to the bandit at once"

// ambientLimit is the most memories an ambient turn may surface.
const ambientLimit = 10

// AmbientScores are one policy's figures over a replay.
type AmbientScores struct {
	Policy   string  `json:"policy"`
	Withheld bool    `json:"withheld,omitempty"` // reports withheld: the same questions, no learning
	Turns    int     `json:"turns"`
	Surfaced int     `json:"surfaced"`
	Used     int     `json:"used"`
	Hits     int     `json:"hits"`     // turns with at least one used memory
	NonEmpty int     `json:"nonempty"` // turns that surfaced anything
	Reward   float64 `json:"reward_sum"`
}

// Precision is used / surfaced.
func (s *AmbientScores) Precision() float64 { return share(float64(s.Used), float64(s.Surfaced)) }

// HitRate is the share of turns with a used memory.
func (s *AmbientScores) HitRate() float64 { return share(float64(s.Hits), float64(s.Turns)) }

// UsedPerTurn, SurfacedPerTurn, MeanReward and NonEmptyShare are per-turn means.
func (s *AmbientScores) UsedPerTurn() float64 { return share(float64(s.Used), float64(s.Turns)) }
func (s *AmbientScores) SurfacedPerTurn() float64 {
	return share(float64(s.Surfaced), float64(s.Turns))
}
func (s *AmbientScores) MeanReward() float64    { return share(s.Reward, float64(s.Turns)) }
func (s *AmbientScores) NonEmptyShare() float64 { return share(float64(s.NonEmpty), float64(s.Turns)) }

func share(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// Ambient replays every evaluable question of convs against e in ambient mode under the
// threshold policy; with withhold the reports are not sent (and the bandit learns nothing),
// but the turn is scored as if they had been. e must be fresh: it ingests the conversations.
func Ambient(ctx context.Context, e Engine, convs []*Conversation, policy string, withhold bool, log io.Writer) (*AmbientScores, error) {
	sc := &AmbientScores{Policy: policy, Withheld: withhold}
	for _, c := range convs {
		byID, err := Ingest(ctx, e.Ingest, c)
		if err != nil {
			return nil, err
		}
		ns := Namespace(c)
		for i, q := range c.QA {
			if !Evaluable(q) {
				continue
			}
			now := c.Last().Add(time.Duration(i) * time.Minute)
			conv := fmt.Sprintf("ambient-%s-%d", c.Name, i)
			resp, err := e.Recall.Recall(ctx, &recall.Request{
				Namespace: ns, ConversationID: conv, Mode: models.ModeAmbient, Limit: ambientLimit,
				Messages: []recall.Message{{Content: q.Question, At: now}}, Now: now, Rerank: "off",
				ThresholdPolicy: policy,
			})
			if err != nil {
				return nil, err
			}
			ev := map[string]bool{}
			for _, x := range q.Evidence {
				ev[x] = true
			}
			var events []*models.Event
			var types []models.EventType
			for j, r := range resp.Results {
				t := models.EventIgnored
				if ev[byID[r.Memory.ID]] {
					t = models.EventUsed
				}
				types = append(types, t)
				events = append(events, &models.Event{ID: fmt.Sprintf("%s-%d", conv, j), SurfacingID: r.SurfacingID, Type: t, At: now})
			}
			sc.Turns++
			sc.Surfaced += len(events)
			used := 0
			for _, t := range types {
				if t == models.EventUsed {
					used++
				}
			}
			sc.Used += used
			if used > 0 {
				sc.Hits++
			}
			if len(events) > 0 {
				sc.NonEmpty++
				sc.Reward += engagement.TurnReward(types, len(types))
			} else {
				sc.Reward += engagement.EmptyTurnReward
			}
			if withhold {
				continue
			}
			if len(events) > 0 {
				if _, err := e.Engagement.Apply(ctx, ns, events); err != nil {
					return nil, err
				}
			}
			if e.Reward != nil {
				if _, err := e.Reward(ctx, ns, resp.TurnID, now); err != nil {
					return nil, err
				}
			}
		}
		if log != nil {
			fmt.Fprintf(log, "%s %s: %d turns so far\n", policy, c.Name, sc.Turns)
		}
	}
	return sc, nil
}

// AmbientReport is what `salience eval locomo --ambient` prints.
type AmbientReport struct {
	Rows []*AmbientScores
}

// Print writes one row per policy, then the JSON line.
func (r *AmbientReport) Print(w io.Writer) {
	fmt.Fprintf(w, "policy: %s\n", AmbientPolicy)
	fmt.Fprintf(w, "%-22s %9s %8s %9s %9s %11s %9s\n", "threshold policy", "precision", "hit rate", "used/turn", "surf/turn", "reward/turn", "nonempty")
	type row struct {
		Policy     string  `json:"policy"`
		Withheld   bool    `json:"withheld,omitempty"`
		Precision  float64 `json:"precision"`
		HitRate    float64 `json:"hit_rate"`
		Used       float64 `json:"used_per_turn"`
		Surfaced   float64 `json:"surfaced_per_turn"`
		MeanReward float64 `json:"mean_reward"`
		NonEmpty   float64 `json:"nonempty_share"`
	}
	var rows []row
	for _, s := range r.Rows {
		name := s.Policy
		if s.Withheld {
			name += " (withheld)"
		}
		fmt.Fprintf(w, "%-22s %9.3f %8.3f %9.3f %9.3f %11.4f %9.3f\n", name, s.Precision(), s.HitRate(), s.UsedPerTurn(),
			s.SurfacedPerTurn(), s.MeanReward(), s.NonEmptyShare())
		rows = append(rows, row{s.Policy, s.Withheld, s.Precision(), s.HitRate(), s.UsedPerTurn(), s.SurfacedPerTurn(), s.MeanReward(), s.NonEmptyShare()})
	}
	if c := r.Compare(); c != nil {
		fmt.Fprintf(w, "bandit against off: precision ×%.2f, used/turn ×%.2f; mean reward %+.1f %% against fixed:default, %+.4f against its withheld twin; a fresh namespace (the twin) surfaces on %.1f %% of turns\n",
			c.PrecisionRatio, c.UsedRatio, 100*c.RewardVsDefault, c.RewardVsWithheld, 100*c.FreshNonEmpty)
	}
	b, _ := json.Marshal(rows)
	fmt.Fprintln(w, string(b))
}

// AmbientComparison is the bandit's row against the others (issue acceptance: precision ≥ 3×
// off's, used per turn ≥ 0.5× off's, mean reward ≥ fixed:default's − 5 % and ≥ the
// withheld twin's + 0.02, a fresh namespace non-empty on ≥ 50 % of turns).
type AmbientComparison struct {
	PrecisionRatio, UsedRatio float64 // bandit / off
	RewardVsDefault           float64 // bandit / fixed:default − 1
	RewardVsWithheld          float64 // bandit − withheld twin
	FreshNonEmpty             float64 // the withheld twin's non-empty share
}

// Compare finds the rows it needs; nil when one is missing.
func (r *AmbientReport) Compare() *AmbientComparison {
	var off, def, bandit, twin *AmbientScores
	for _, s := range r.Rows {
		switch {
		case s.Policy == "off" && !s.Withheld:
			off = s
		case s.Policy == "fixed:default" && !s.Withheld:
			def = s
		case s.Policy == "bandit" && !s.Withheld:
			bandit = s
		case s.Policy == "bandit" && s.Withheld:
			twin = s
		}
	}
	if off == nil || def == nil || bandit == nil || twin == nil {
		return nil
	}
	return &AmbientComparison{
		PrecisionRatio:   share(bandit.Precision(), off.Precision()),
		UsedRatio:        share(bandit.UsedPerTurn(), off.UsedPerTurn()),
		RewardVsDefault:  share(bandit.MeanReward(), def.MeanReward()) - 1,
		RewardVsWithheld: bandit.MeanReward() - twin.MeanReward(),
		FreshNonEmpty:    twin.NonEmptyShare(),
	}
}
