package eval

import (
	"context"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/salience-ai/salience/ingest"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/recall"
)

// Ks are the cut-offs evidence recall is reported at.
var Ks = []int{5, 10, 25}

// Scores accumulates evidence recall over questions.
type Scores struct {
	N      int
	Recall map[int]float64 // k → sum of per-question recall@k
	Hit10  float64         // questions with any evidence in the top 10
}

func newScores() *Scores { return &Scores{Recall: map[int]float64{}} }

// Add scores one question's ranked dia ids against its evidence.
func (s *Scores) Add(ranked, evidence []string) {
	s.N++
	ev := map[string]bool{}
	for _, e := range evidence {
		ev[e] = true
	}
	for _, k := range Ks {
		found := 0
		for i, id := range ranked {
			if i >= k {
				break
			}
			if ev[id] {
				found++
			}
		}
		if len(ev) > 0 {
			s.Recall[k] += float64(found) / float64(len(ev))
		}
	}
	for i, id := range ranked {
		if i >= 10 {
			break
		}
		if ev[id] {
			s.Hit10++
			break
		}
	}
}

// Mean returns recall@k averaged over the questions.
func (s *Scores) Mean(k int) float64 {
	if s.N == 0 {
		return 0
	}
	return s.Recall[k] / float64(s.N)
}

// HitRate returns hit@10.
func (s *Scores) HitRate() float64 {
	if s.N == 0 {
		return 0
	}
	return s.Hit10 / float64(s.N)
}

// Report is the result of an evaluation: scores per category and overall.
type Report struct {
	ByCategory map[int]*Scores
	Overall    *Scores
	Memories   int
	Elapsed    time.Duration
	Rerank     map[string]int // questions by rerank status, when reranking was asked for
}

// Options tune a run; the zero value asks with reranking off, as the retrieval figures do.
type Options struct {
	Rerank        string        // the requests' rerank mode (auto, on); "" means off
	LatencyBudget time.Duration // the requests' latency budget; 0 means recall's default
}

// Namespace is the namespace a conversation is ingested into.
func Namespace(c *Conversation) string { return "locomo-" + c.Name }

// Ingest stores a conversation's turns through the ingest service, one batch per session,
// each turn dated at its session's time plus its position (so order is kept), and returns
// the map from memory id to dia id.
func Ingest(ctx context.Context, svc *ingest.Service, c *Conversation) (map[string]string, error) {
	ns := Namespace(c)
	byID := map[string]string{}
	for _, s := range c.Sessions {
		batch := make([]*models.Memory, 0, len(s.Turns))
		for i, t := range s.Turns {
			batch = append(batch, &models.Memory{
				Kind:      models.KindTurn,
				Content:   t.Content(),
				CreatedAt: s.At.Add(time.Duration(i) * time.Second),
				Source:    models.Source{ConversationID: ns, MessageID: t.DiaID, Speaker: t.Speaker},
			})
		}
		if len(batch) == 0 {
			continue
		}
		created, err := svc.Ingest(ctx, ns, batch)
		if err != nil {
			return nil, fmt.Errorf("%s session %d: %w", c.Name, s.N, err)
		}
		for i, m := range created {
			byID[m.ID] = s.Turns[i].DiaID
		}
	}
	return byID, nil
}

// Ask runs one question through recall (mode search) at the conversation's clock and returns
// the dia ids of the results, best first.
func Ask(ctx context.Context, p *recall.Pipeline, c *Conversation, q QA, conv string, limit int, byID map[string]string) ([]string, *recall.Response, error) {
	return askWith(ctx, p, c, q, conv, limit, byID, Options{})
}

func askWith(ctx context.Context, p *recall.Pipeline, c *Conversation, q QA, conv string, limit int, byID map[string]string, opts Options) ([]string, *recall.Response, error) {
	mode := opts.Rerank
	if mode == "" {
		mode = "off"
	}
	resp, err := p.Recall(ctx, &recall.Request{
		Namespace: Namespace(c), ConversationID: conv, Mode: models.ModeSearch,
		Query: q.Question, Limit: limit, Now: c.Last(), Rerank: mode, LatencyBudget: opts.LatencyBudget,
	})
	if err != nil {
		return nil, nil, err
	}
	ranked := make([]string, 0, len(resp.Results))
	for _, r := range resp.Results {
		ranked = append(ranked, byID[r.Memory.ID])
	}
	return ranked, resp, nil
}

// Evaluable reports whether a question is scored: categories 1–4 with evidence
// (category 5, adversarial, has no evidence-based score).
func Evaluable(q QA) bool { return q.Category >= 1 && q.Category <= 4 && len(q.Evidence) > 0 }

// Run ingests every conversation into store and scores every evaluable question.
func Run(ctx context.Context, ing *ingest.Service, p *recall.Pipeline, convs []*Conversation, log io.Writer) (*Report, error) {
	return RunWith(ctx, ing, p, convs, log, Options{})
}

// RunWith is Run with options (reranking).
func RunWith(ctx context.Context, ing *ingest.Service, p *recall.Pipeline, convs []*Conversation, log io.Writer, opts Options) (*Report, error) {
	start := time.Now()
	rep := &Report{ByCategory: map[int]*Scores{}, Overall: newScores()}
	for _, c := range convs {
		byID, err := Ingest(ctx, ing, c)
		if err != nil {
			return nil, err
		}
		rep.Memories += len(byID)
		for i, q := range c.QA {
			if !Evaluable(q) {
				continue
			}
			ranked, resp, err := askWith(ctx, p, c, q, fmt.Sprintf("eval-%s-%d", c.Name, i), 25, byID, opts)
			if err != nil {
				return nil, fmt.Errorf("%s question %d: %w", c.Name, i, err)
			}
			if opts.Rerank != "" {
				if rep.Rerank == nil {
					rep.Rerank = map[string]int{}
				}
				rep.Rerank[resp.Rerank.Status]++
			}
			cat := rep.ByCategory[q.Category]
			if cat == nil {
				cat = newScores()
				rep.ByCategory[q.Category] = cat
			}
			cat.Add(ranked, q.Evidence)
			rep.Overall.Add(ranked, q.Evidence)
		}
		if log != nil {
			fmt.Fprintf(log, "%s: %d turns, %d questions scored so far\n", c.Name, len(byID), rep.Overall.N)
		}
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// Print writes the report as a table, then the overall figures as one JSON line.
func (r *Report) Print(w io.Writer) {
	fmt.Fprintf(w, "%-10s %6s %9s %9s %9s %7s\n", "category", "n", "recall@5", "recall@10", "recall@25", "hit@10")
	names := map[int]string{1: "1 multi", 2: "2 temporal", 3: "3 open", 4: "4 single"}
	for cat := 1; cat <= 4; cat++ {
		s := r.ByCategory[cat]
		if s == nil {
			continue
		}
		fmt.Fprintf(w, "%-10s %6d %9.3f %9.3f %9.3f %7.3f\n", names[cat], s.N, s.Mean(5), s.Mean(10), s.Mean(25), s.HitRate())
	}
	o := r.Overall
	fmt.Fprintf(w, "%-10s %6d %9.3f %9.3f %9.3f %7.3f\n", "overall", o.N, o.Mean(5), o.Mean(10), o.Mean(25), o.HitRate())
	fmt.Fprintf(w, "(%d memories, %.1fs)\n", r.Memories, r.Elapsed.Seconds())
	if len(r.Rerank) > 0 {
		statuses := make([]string, 0, len(r.Rerank))
		for s := range r.Rerank {
			statuses = append(statuses, s)
		}
		sort.Strings(statuses)
		fmt.Fprint(w, "rerank:")
		for _, s := range statuses {
			fmt.Fprintf(w, " %s %d", s, r.Rerank[s])
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, `{"recall@5":%.4f,"recall@10":%.4f,"recall@25":%.4f,"hit@10":%.4f}`+"\n", o.Mean(5), o.Mean(10), o.Mean(25), o.HitRate())
}
