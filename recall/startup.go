package recall

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/salience-ai/salience/ids"
	"github.com/salience-ai/salience/models"
)

// startup builds the startup package (seed: PPS) by listing, with no search at all: the
// newest anchors, the most important facts and insights (briefFacts), the newest crystals
// and summaries, and the newest turns after the newest summary that covers them, under the
// request's limit and token budget (packStartup). With a conversation id the turns are that
// conversation's; without one, the namespace's.
func (p *Pipeline) startup(ctx context.Context, req *Request) (*Response, error) {
	ns := req.Namespace
	newest := func(k models.Kind, n int) ([]*models.Memory, error) {
		if n <= 0 {
			return nil, nil
		}
		ms, _, err := p.store.FindMemories(ctx, models.MemoryFilter{Namespace: ns, Kinds: []models.Kind{k}, Limit: n})
		return ms, err
	}
	c := p.opts.Startup
	anchors, err := newest(models.KindAnchor, c.Anchors)
	if err != nil {
		return nil, err
	}
	var facts []*models.Memory
	if c.Facts > 0 {
		ms, _, err := p.store.FindMemories(ctx, models.MemoryFilter{Namespace: ns,
			Kinds: []models.Kind{models.KindFact, models.KindInsight}, Limit: factScan(c.Facts)})
		if err != nil {
			return nil, err
		}
		facts = briefFacts(ms, req.Now, c.Facts)
	}
	crystals, err := newest(models.KindCrystal, c.Crystals)
	if err != nil {
		return nil, err
	}
	summaries, err := newest(models.KindSummary, c.Summaries)
	if err != nil {
		return nil, err
	}
	// Newest first: no more turns than the limit can show are read.
	f := models.MemoryFilter{Namespace: ns, Kinds: []models.Kind{models.KindTurn}, ConversationID: req.ConversationID, Limit: req.Limit}
	if s := coveringSummary(summaries, req.ConversationID); s != nil {
		// Turns after the summary: everything before it is summarized in the package.
		f.Since = s.CreatedAt.Add(1)
	}
	turns, _, err := p.store.FindMemories(ctx, f)
	if err != nil {
		return nil, err
	}

	resp := &Response{Rerank: RerankStatus{Status: "off", Reason: "startup runs no search"}}
	st, err := p.conversation(ctx, req)
	if err != nil {
		return nil, err
	}
	in := &intake{turnID: req.TurnID, convType: req.ConversationType, state: st}
	if in.turnID == "" {
		in.turnID = ids.New(req.Now)
	}
	resp.TurnID = in.turnID
	resp.Results = packStartup(req, [][]*models.Memory{anchors, facts, crystals, summaries}, turns)
	nodes, edges, err := p.store.GraphStats(ctx, ns)
	if err != nil {
		return nil, err
	}
	_, total, err := p.store.FindMemories(ctx, models.MemoryFilter{Namespace: ns, Limit: 1})
	if err != nil {
		return nil, err
	}
	resp.Startup = &Startup{Now: req.Now, Memories: total, Concepts: nodes - total, Edges: edges}
	if resp.Startup.Concepts < 0 {
		resp.Startup.Concepts = 0
	}
	if err := p.record(ctx, req, in, resp, resp.Results); err != nil {
		return nil, err
	}
	resp.Context = Format(resp.Results, req.Now)
	return resp, nil
}

// coveringSummary is the newest of the package's summaries (newest first) that summarizes
// the turns the package would show: one of the conversation asked about, or one tied to no
// conversation, which summarizes everything before it. A summary of another conversation
// covers none of this one's turns. Without a conversation id, the newest summary.
func coveringSummary(summaries []*models.Memory, conversationID string) *models.Memory {
	for _, s := range summaries {
		if conversationID == "" || s.Source.ConversationID == "" || s.Source.ConversationID == conversationID {
			return s
		}
	}
	return nil
}

// factScan is how many of the newest facts and insights startup reads to choose n from:
// the stores list by time only, so importance is ranked here over a bounded window (an
// important fact older than the newest factScan is not briefed; search still finds it).
func factScan(n int) int {
	return min(1000, max(200, 20*n))
}

// briefFacts chooses the facts and insights worth briefing unasked: those that may be
// brought back unasked now (still true, not superseded, not sensitive, not a chunk, not in
// a dismissal's cooldown), the most important first, then the most trusted (confidence),
// then the newest; at most n.
func briefFacts(ms []*models.Memory, now time.Time, n int) []*models.Memory {
	var out []*models.Memory
	for _, m := range ms {
		if m.Resurfaceable(now) {
			out = append(out, m)
		}
	}
	slices.SortStableFunc(out, func(a, b *models.Memory) int {
		return cmp.Or(cmp.Compare(b.Importance, a.Importance), cmp.Compare(b.Confidence, a.Confidence),
			b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out[:min(n, len(out))]
}

// packStartup chooses the package under the request's limit and token budget. The distilled
// kinds come first, in the order given (anchors, facts, crystals, summaries): one that does not fit
// the budget is skipped, as a shorter one may. Then the turns, newest first (as given),
// until the limit or one that does not fit: the turns shown are always the latest stretch,
// without gaps. They are shown oldest first, as the conversation ran.
func packStartup(req *Request, distilled [][]*models.Memory, turnsNewestFirst []*models.Memory) []Result {
	budget := newTokenBudget(req.TokenBudget, req.Now)
	result := func(m *models.Memory) Result {
		return Result{Memory: m, Content: m.Content, Score: 1, Reasons: []string{"startup"}}
	}
	var out []Result
	for _, group := range distilled {
		for _, m := range group {
			if len(out) >= req.Limit {
				return out
			}
			if r := result(m); budget.take(r) {
				out = append(out, r)
			}
		}
	}
	var turns []Result
	for _, m := range turnsNewestFirst {
		r := result(m)
		if len(out)+len(turns) >= req.Limit || !budget.take(r) {
			break
		}
		turns = append(turns, r)
	}
	for i := len(turns) - 1; i >= 0; i-- {
		out = append(out, turns[i])
	}
	return out
}
