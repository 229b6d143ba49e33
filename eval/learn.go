package eval

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"time"

	"github.com/salience-ai/salience/engagement"
	"github.com/salience-ai/salience/ingest"
	"github.com/salience-ai/salience/learn"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/recall"
)

// Engine is one store's ingest, recall and engagement paths.
type Engine struct {
	Ingest     *ingest.Service
	Recall     *recall.Pipeline
	Engagement *engagement.Service
	// Reward feeds a settled turn to the threshold bandit (maintenance.Service.RewardTurn);
	// nil: the bandit learns only from the bandit-upkeep job, which an evaluation never runs.
	Reward func(ctx context.Context, ns, turnID string, now time.Time) (bool, error)
}

// LearnPolicy is how the replay reports what a bot did with what it was shown: a bot that
// answered from a surfaced turn used it; the other surfaced turns were shown and not used,
// so they are ignored — not dismissed: an unused memory is not wrong, only not needed then,
// and dismissals would push away memories other questions need.
const LearnPolicy = "used for surfaced evidence turns in the top 10; ignored for the other surfaced turns in the top 10; no dismissals"

// replayK is how many results of a replayed question the bot sees and reports on.
const replayK = 10

// LearnReport compares recall@k on held-back questions with and without the feedback of a
// replay of the other questions.
type LearnReport struct {
	Without, With *Scores
	// Ceiling is the share of held-back evidence that was used during the replay but missed
	// in the top 10 without feedback: the most any learning from that replay could add.
	Ceiling  float64
	Replayed int
	Events   int
	Elapsed  time.Duration
	// Precision is used / surfaced over the first and the second half of each
	// conversation's replayed questions (in the order replayed).
	Shown, Used [2]int
	// Calib is p_use of the held-back questions' top 10 with feedback against whether the
	// result was evidence.
	Calib learn.Calibration
}

// Held reports whether a question is held back for evaluation (else it is replayed); a
// stable hash of the conversation and question splits them in halves.
func Held(c *Conversation, i int, q QA) bool {
	h := fnv.New32a()
	fmt.Fprintf(h, "%s\x00%d\x00%s", c.Name, i, q.Question)
	return h.Sum32()%2 == 1
}

// Learn ingests every conversation into both engines, replays the first half of the
// questions through recall and the engagement API of `with`, then scores the held-back half
// on both engines.
func Learn(ctx context.Context, without, with Engine, convs []*Conversation, log io.Writer) (*LearnReport, error) {
	start := time.Now()
	rep := &LearnReport{Without: newScores(), With: newScores()}
	var ceilSum float64
	for _, c := range convs {
		byA, err := Ingest(ctx, without.Ingest, c)
		if err != nil {
			return nil, err
		}
		byB, err := Ingest(ctx, with.Ingest, c)
		if err != nil {
			return nil, err
		}
		used := map[string]bool{} // dia ids used during the replay
		var replayed []int
		for i, q := range c.QA {
			if Evaluable(q) && !Held(c, i, q) {
				replayed = append(replayed, i)
			}
		}
		for j, i := range replayed {
			n, u, err := replay(ctx, with, c, i, c.QA[i], byB, used)
			if err != nil {
				return nil, err
			}
			half := 0
			if 2*j >= len(replayed) {
				half = 1
			}
			rep.Shown[half] += n
			rep.Used[half] += u
			rep.Replayed++
			rep.Events += n
		}
		for i, q := range c.QA {
			if !Evaluable(q) || !Held(c, i, q) {
				continue
			}
			conv := fmt.Sprintf("held-%s-%d", c.Name, i)
			a, _, err := Ask(ctx, without.Recall, c, q, conv, 25, byA)
			if err != nil {
				return nil, err
			}
			b, resp, err := Ask(ctx, with.Recall, c, q, conv, 25, byB)
			if err != nil {
				return nil, err
			}
			isEv := map[string]bool{}
			for _, e := range q.Evidence {
				isEv[e] = true
			}
			for j, r := range resp.Results {
				if j >= replayK {
					break
				}
				y := 0.0
				if isEv[byB[r.Memory.ID]] {
					y = 1
				}
				rep.Calib.Add(r.PUse, y)
			}
			rep.Without.Add(a, q.Evidence)
			rep.With.Add(b, q.Evidence)
			top := map[string]bool{}
			for j, id := range a {
				if j < 10 {
					top[id] = true
				}
			}
			ev := map[string]bool{}
			for _, e := range q.Evidence {
				ev[e] = true
			}
			missed := 0
			for e := range ev {
				if used[e] && !top[e] {
					missed++
				}
			}
			ceilSum += float64(missed) / float64(len(ev))
		}
		if log != nil {
			fmt.Fprintf(log, "%s: %d replayed, %d held back so far\n", c.Name, rep.Replayed, rep.With.N)
		}
	}
	if rep.With.N > 0 {
		rep.Ceiling = ceilSum / float64(rep.With.N)
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// replay asks one question as a bot would and reports engagement under LearnPolicy; it
// returns the events applied and how many of them were uses.
func replay(ctx context.Context, e Engine, c *Conversation, i int, q QA, byID map[string]string, used map[string]bool) (int, int, error) {
	conv := fmt.Sprintf("replay-%s-%d", c.Name, i)
	_, resp, err := Ask(ctx, e.Recall, c, q, conv, replayK, byID)
	if err != nil {
		return 0, 0, err
	}
	uses := 0
	ev := map[string]bool{}
	for _, x := range q.Evidence {
		ev[x] = true
	}
	var events []*models.Event
	for j, r := range resp.Results {
		t := models.EventIgnored
		if dia := byID[r.Memory.ID]; ev[dia] {
			t = models.EventUsed
			used[dia] = true
			uses++
		}
		events = append(events, &models.Event{
			ID: fmt.Sprintf("%s-%d", conv, j), SurfacingID: r.SurfacingID, Type: t, At: c.Last(),
		})
	}
	if len(events) == 0 {
		return 0, 0, nil
	}
	res, err := e.Engagement.Apply(ctx, Namespace(c), events)
	if err != nil {
		return 0, 0, err
	}
	if res.Rejected > 0 {
		for _, r := range res.Results {
			if r.Err != nil {
				return 0, 0, fmt.Errorf("engagement rejected %s: %v", r.ID, r.Err)
			}
		}
	}
	return res.Applied, uses, nil
}

// Print writes both sides, the lift and the ceiling; the last line is JSON.
func (r *LearnReport) Print(w io.Writer) {
	fmt.Fprintf(w, "policy: %s\n", LearnPolicy)
	fmt.Fprintf(w, "%d questions replayed (%d events), %d held back\n", r.Replayed, r.Events, r.With.N)
	fmt.Fprintf(w, "%-18s %9s %9s %9s %7s\n", "held-back", "recall@5", "recall@10", "recall@25", "hit@10")
	for _, row := range []struct {
		name string
		s    *Scores
	}{{"without feedback", r.Without}, {"with feedback", r.With}} {
		fmt.Fprintf(w, "%-18s %9.3f %9.3f %9.3f %7.3f\n", row.name, row.s.Mean(5), row.s.Mean(10), row.s.Mean(25), row.s.HitRate())
	}
	lift := r.With.Mean(10) - r.Without.Mean(10)
	fmt.Fprintf(w, "lift recall@10 %+.3f of a ceiling of %.3f (%.1fs)\n", lift, r.Ceiling, r.Elapsed.Seconds())
	p1, p2 := ratio(r.Used[0], r.Shown[0]), ratio(r.Used[1], r.Shown[1])
	fmt.Fprintf(w, "replay precision (used/surfaced): first half %.3f, second half %.3f\n", p1, p2)
	fmt.Fprintf(w, "held-back top %d p_use: Brier %.4f (best constant %.4f at %.3f), ECE %.4f (constant 0), %d predictions\n",
		replayK, r.Calib.Brier(), r.Calib.ConstantBrier(), r.Calib.Rate(), r.Calib.ECE(), r.Calib.N)
	for _, pt := range r.Calib.Curve() {
		fmt.Fprintf(w, "  reliability: predicted %.3f observed %.3f (%d)\n", pt.Predicted, pt.Observed, pt.Count)
	}
	fmt.Fprintf(w, `{"recall@10_without":%.4f,"recall@10_with":%.4f,"lift":%.4f,"ceiling":%.4f,"precision_first":%.4f,"precision_second":%.4f,"brier":%.4f,"brier_constant":%.4f,"ece":%.4f}`+"\n",
		r.Without.Mean(10), r.With.Mean(10), lift, r.Ceiling, p1, p2, r.Calib.Brier(), r.Calib.ConstantBrier(), r.Calib.ECE())
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
