package eval

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/salience-ai/salience/engagement"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/recall"
)

// NaturalPolicy is how `eval locomo --natural` plays a conversation: as a bot does, with an
// ambient recall before every message and honest reports of what it did with what it saw.
const NaturalPolicy = "each dialog turn: ambient recall (limit 10) on the session's last three messages, then stored; " +
	"a surfaced turn is used when a replayed-half question lists it and the current turn as evidence, else ignored. " +
	"After each session, each question whose evidence has all been said is asked once, alone, as an ambient recall (limit 10): " +
	"replayed-half questions report their evidence used and the rest ignored, held-half questions report nothing and are scored. " +
	"The reporting bot's turns are settled with the threshold bandit as a server settles them; the twin gets the same turns and questions and never reports; no scheduled job runs"

// naturalWindow is how many of the session's latest messages a dialog turn's recall reads.
const naturalWindow = 3

// NaturalSide is one namespace's figures over a natural replay.
type NaturalSide struct {
	Held   *Scores // held-half questions, top 10 of an ambient recall
	Turns  int     // dialog turns and questions
	Reward float64 // sum over Turns of the turn's reward (what the bot would have reported)
	// At dialog turns, by half of each conversation's dialog turns.
	DialogTurns, Surfaced, Used [2]int
}

// NaturalReport compares a namespace whose bot reports with a twin that never does.
type NaturalReport struct {
	Reporting, Silent NaturalSide
	Events            int // events the reporting bot sent
	Elapsed           time.Duration
}

// Natural plays every conversation into both engines, which must be fresh: with reports
// engagement to its namespace, silent never does. Both see the same turns and questions
// in the same order, so where they differ it is what reports taught.
func Natural(ctx context.Context, with, silent Engine, convs []*Conversation, log io.Writer) (*NaturalReport, error) {
	start := time.Now()
	rep := &NaturalReport{Reporting: NaturalSide{Held: newScores()}, Silent: NaturalSide{Held: newScores()}}
	for _, c := range convs {
		if err := playNatural(ctx, with, silent, c, rep); err != nil {
			return nil, err
		}
		if log != nil {
			fmt.Fprintf(log, "%s: %d turns, %d held-back questions so far\n", c.Name, rep.Reporting.Turns, rep.Reporting.Held.N)
		}
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// naturalSide is one engine's state while a conversation is played.
type naturalSide struct {
	e      Engine
	report bool
	byID   map[string]string // memory id → dia id
	out    *NaturalSide
}

func playNatural(ctx context.Context, with, silent Engine, c *Conversation, rep *NaturalReport) error {
	ns := Namespace(c)
	// pairs[a][b]: a replayed-half question lists both a and b as evidence.
	pairs := map[string]map[string]bool{}
	for i, q := range c.QA {
		if !Evaluable(q) || Held(c, i, q) {
			continue
		}
		for _, a := range q.Evidence {
			for _, b := range q.Evidence {
				if a == b {
					continue
				}
				if pairs[a] == nil {
					pairs[a] = map[string]bool{}
				}
				pairs[a][b] = true
			}
		}
	}
	total := 0
	for _, s := range c.Sessions {
		total += len(s.Turns)
	}
	sides := []*naturalSide{
		{e: with, report: true, byID: map[string]string{}, out: &rep.Reporting},
		{e: silent, byID: map[string]string{}, out: &rep.Silent},
	}
	said := map[string]bool{}
	asked := map[int]bool{}
	k := 0 // dialog turns played so far in this conversation
	for _, s := range c.Sessions {
		conv := fmt.Sprintf("natural-%s-s%d", c.Name, s.N)
		var window []recall.Message
		var last time.Time
		for i, t := range s.Turns {
			at := s.At.Add(time.Duration(i) * time.Second)
			last = at
			window = append(window, recall.Message{Speaker: t.Speaker, Content: t.Content(), At: at})
			if len(window) > naturalWindow {
				window = window[1:]
			}
			half := 0
			if 2*k >= total {
				half = 1
			}
			k++
			for j, side := range sides {
				resp, err := side.e.Recall.Recall(ctx, &recall.Request{
					Namespace: ns, ConversationID: conv, Mode: models.ModeAmbient, Limit: ambientLimit,
					Messages: append([]recall.Message(nil), window...), Now: at, Rerank: "off",
				})
				if err != nil {
					return fmt.Errorf("%s %s: %w", c.Name, t.DiaID, err)
				}
				types := make([]models.EventType, len(resp.Results))
				used := 0
				for r, res := range resp.Results {
					types[r] = models.EventIgnored
					if pairs[t.DiaID][side.byID[res.Memory.ID]] {
						types[r] = models.EventUsed
						used++
					}
				}
				side.out.DialogTurns[half]++
				side.out.Surfaced[half] += len(types)
				side.out.Used[half] += used
				side.out.Turns++
				side.out.Reward += engagement.TurnReward(types, len(types))
				if side.report {
					n, err := reportTurn(ctx, side.e, ns, fmt.Sprintf("%s-%s-%d", conv, t.DiaID, j), resp, types, at)
					if err != nil {
						return err
					}
					rep.Events += n
				}
				created, err := side.e.Ingest.Ingest(ctx, ns, []*models.Memory{{
					Kind: models.KindTurn, Content: t.Content(), CreatedAt: at,
					Source: models.Source{ConversationID: conv, MessageID: t.DiaID, Speaker: t.Speaker},
				}})
				if err != nil {
					return fmt.Errorf("%s %s: %w", c.Name, t.DiaID, err)
				}
				side.byID[created[0].ID] = t.DiaID
			}
			said[t.DiaID] = true
		}
		// The questions whose evidence has all been said, each asked once.
		for i, q := range c.QA {
			if !Evaluable(q) || asked[i] || !allSaid(q.Evidence, said) {
				continue
			}
			asked[i] = true
			held := Held(c, i, q)
			at := last.Add(time.Minute + time.Duration(i)*time.Second)
			qconv := fmt.Sprintf("natural-%s-q%d", c.Name, i)
			ev := map[string]bool{}
			for _, e := range q.Evidence {
				ev[e] = true
			}
			for _, side := range sides {
				resp, err := side.e.Recall.Recall(ctx, &recall.Request{
					Namespace: ns, ConversationID: qconv, Mode: models.ModeAmbient, Limit: ambientLimit,
					Messages: []recall.Message{{Content: q.Question, At: at}}, Now: at, Rerank: "off",
				})
				if err != nil {
					return fmt.Errorf("%s question %d: %w", c.Name, i, err)
				}
				ranked := make([]string, len(resp.Results))
				types := make([]models.EventType, len(resp.Results))
				for r, res := range resp.Results {
					ranked[r] = side.byID[res.Memory.ID]
					types[r] = models.EventIgnored
					if ev[ranked[r]] {
						types[r] = models.EventUsed
					}
				}
				side.out.Turns++
				side.out.Reward += engagement.TurnReward(types, len(types))
				if held {
					side.out.Held.Add(ranked, q.Evidence)
					continue
				}
				if side.report {
					n, err := reportTurn(ctx, side.e, ns, qconv, resp, types, at)
					if err != nil {
						return err
					}
					rep.Events += n
				}
			}
		}
	}
	return nil
}

func allSaid(evidence []string, said map[string]bool) bool {
	for _, e := range evidence {
		if !said[e] {
			return false
		}
	}
	return true
}

// reportTurn sends one event per surfaced memory through the engagement path and returns how
// many were applied; an event the service rejects fails the run (the replay is wrong then).
func reportTurn(ctx context.Context, e Engine, ns, prefix string, resp *recall.Response, types []models.EventType, at time.Time) (int, error) {
	if len(types) == 0 {
		return 0, reward(ctx, e, ns, resp, at)
	}
	events := make([]*models.Event, len(types))
	for r, res := range resp.Results {
		events[r] = &models.Event{ID: fmt.Sprintf("%s-%d", prefix, r), SurfacingID: res.SurfacingID, Type: types[r], At: at}
	}
	res, err := e.Engagement.Apply(ctx, ns, events)
	if err != nil {
		return 0, err
	}
	for _, r := range res.Results {
		if r.Err != nil {
			return 0, fmt.Errorf("engagement rejected %s: %v", r.ID, r.Err)
		}
	}
	return res.Applied, reward(ctx, e, ns, resp, at)
}

// reward settles a reported turn with the threshold bandit, as a server does when a turn's
// reports are all in (Engine.Reward; nil: the bandit does not learn).
func reward(ctx context.Context, e Engine, ns string, resp *recall.Response, at time.Time) error {
	if e.Reward == nil {
		return nil
	}
	if _, err := e.Reward(ctx, ns, resp.TurnID, at); err != nil && models.ErrorCode(err) != models.ENOTFOUND {
		return err
	}
	return nil
}

// Print writes both namespaces side by side; the last line is JSON.
func (r *NaturalReport) Print(w io.Writer) {
	fmt.Fprintf(w, "policy: %s\n", NaturalPolicy)
	fmt.Fprintf(w, "%d turns and questions a namespace, %d events reported, %d held-back questions (%.1fs)\n",
		r.Reporting.Turns, r.Events, r.Reporting.Held.N, r.Elapsed.Seconds())
	fmt.Fprintf(w, "%-10s %7s %9s %7s | %-25s | %-25s\n", "", "held", "held", "reward", "dialog turns, 1st half", "dialog turns, 2nd half")
	fmt.Fprintf(w, "%-10s %7s %9s %7s | %9s %6s %8s | %9s %6s %8s\n", "namespace", "hit@10", "recall@10", "/turn",
		"surf/turn", "used", "prec", "surf/turn", "used", "prec")
	for _, row := range []struct {
		name string
		s    *NaturalSide
	}{{"reporting", &r.Reporting}, {"silent", &r.Silent}} {
		s := row.s
		fmt.Fprintf(w, "%-10s %7.3f %9.3f %7.3f |", row.name, s.Held.HitRate(), s.Held.Mean(10), s.MeanReward())
		for h := 0; h < 2; h++ {
			fmt.Fprintf(w, " %9.2f %6d %8.3f |", s.SurfacedPerTurn(h), s.Used[h], s.Precision(h))
		}
		fmt.Fprintln(w)
	}
	a, b := &r.Reporting, &r.Silent
	fmt.Fprintf(w, `{"hit@10_reporting":%.4f,"hit@10_silent":%.4f,"recall@10_reporting":%.4f,"recall@10_silent":%.4f,"reward_reporting":%.4f,"reward_silent":%.4f,"dialog_used_reporting":%d,"dialog_used_silent":%d,"dialog_precision_reporting":%.4f,"dialog_precision_silent":%.4f}`+"\n",
		a.Held.HitRate(), b.Held.HitRate(), a.Held.Mean(10), b.Held.Mean(10), a.MeanReward(), b.MeanReward(),
		a.Used[0]+a.Used[1], b.Used[0]+b.Used[1], a.DialogPrecision(), b.DialogPrecision())
}

// MeanReward is the reward per turn over dialog turns and questions.
func (s *NaturalSide) MeanReward() float64 { return share(s.Reward, float64(s.Turns)) }

// SurfacedPerTurn is the memories surfaced per dialog turn in half h.
func (s *NaturalSide) SurfacedPerTurn(h int) float64 {
	return share(float64(s.Surfaced[h]), float64(s.DialogTurns[h]))
}

// Precision is used / surfaced at the dialog turns of half h.
func (s *NaturalSide) Precision(h int) float64 {
	return share(float64(s.Used[h]), float64(s.Surfaced[h]))
}

// DialogPrecision is used / surfaced over all dialog turns.
func (s *NaturalSide) DialogPrecision() float64 {
	return share(float64(s.Used[0]+s.Used[1]), float64(s.Surfaced[0]+s.Surfaced[1]))
}
