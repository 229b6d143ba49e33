package recall

import (
	"context"
	"time"

	"github.com/salience-ai/salience/graph"
	"github.com/salience-ai/salience/ids"
	"github.com/salience-ai/salience/models"
)

// Conversation-state bounds.
const (
	maxRecentTopics = 20
	maxMessageTimes = 20
)

// conversation returns the conversation's state (a new one when none was recorded), or nil
// without a conversation id.
func (p *Pipeline) conversation(ctx context.Context, req *Request) (*models.ConversationState, error) {
	if req.ConversationID == "" {
		return nil, nil
	}
	st, err := p.store.GetConversation(ctx, req.Namespace, req.ConversationID)
	switch {
	case err == nil:
		return st, nil
	case models.ErrorCode(err) == models.ENOTFOUND:
		return &models.ConversationState{Namespace: req.Namespace, ConversationID: req.ConversationID}, nil
	default:
		return nil, err
	}
}

// recentlySurfaced returns the memories shown in this conversation in its last RecentTurns
// turns; ambient recall does not repeat them (DESIGN.md §4.6). The conversation state
// carries them, so no log is read.
func (p *Pipeline) recentlySurfaced(req *Request, st *models.ConversationState) map[string]bool {
	if req.Mode != models.ModeAmbient || st == nil {
		return nil
	}
	out := map[string]bool{}
	turns := st.RecentSurfaced
	if len(turns) > p.opts.RecentTurns {
		turns = turns[len(turns)-p.opts.RecentTurns:]
	}
	for _, turn := range turns {
		for _, id := range turn {
			out[id] = true
		}
	}
	return out
}

// focalDistances returns hop counts from the focal entity's concept node, up to 3 hops.
func (p *Pipeline) focalDistances(ctx context.Context, ns, focal string) (map[string]int, error) {
	next := func(ctx context.Context, ids []string) ([]*models.Edge, error) {
		return p.store.StrongestNeighbors(ctx, ns, ids, graph.DefaultMaxFanout, nil)
	}
	return graph.Distances(ctx, []string{models.ConceptID(focal)}, next, 3)
}

// record stores one Surfacing per result, moves the surfaced memories' counters and the
// conversation's state (DESIGN.md §4.11).
func (p *Pipeline) record(ctx context.Context, req *Request, in *intake, resp *Response, results []Result) error {
	now := req.Now.UTC()
	ss := make([]*models.Surfacing, len(results))
	for i := range results {
		r := &results[i]
		mode := req.Mode
		for _, reason := range r.Reasons {
			if reason == "resurface" && req.Mode == models.ModeAmbient {
				mode = models.ModeResurface
			}
		}
		s := &models.Surfacing{
			ID: ids.New(now), Namespace: req.Namespace, ConversationID: req.ConversationID,
			TurnID: in.turnID, MemoryID: r.Memory.ID, Mode: mode, Rank: i + 1, Score: r.Score,
			ConvType: in.convType, Threshold: resp.Threshold, Variant: resp.Variant,
			Concepts: in.concepts, LatencyMS: resp.LatencyMS, At: now,
		}
		if r.Components != nil {
			s.Components = *r.Components
		}
		r.SurfacingID = s.ID
		ss[i] = s
		if !req.Explain {
			r.Components = nil
		}
	}
	state := in.state
	if state != nil {
		ids := make([]string, len(results))
		for i := range results {
			ids[i] = results[i].Memory.ID
		}
		advance(state, in, ids, p.opts.RecentTurns, now)
	}
	if len(ss) == 0 && state == nil {
		return nil
	}
	if err := p.store.RecordSurfacings(ctx, ss, state); err != nil {
		return err
	}
	return nil
}

// advance moves a conversation's state by one turn.
func advance(st *models.ConversationState, in *intake, surfaced []string, keepTurns int, now time.Time) {
	st.Turns++
	st.RecentSurfaced = append(st.RecentSurfaced, surfaced)
	if len(st.RecentSurfaced) > keepTurns {
		st.RecentSurfaced = st.RecentSurfaced[len(st.RecentSurfaced)-keepTurns:]
	}
	st.Type = in.convType
	topics := append(append([]string(nil), in.concepts...), st.RecentTopics...)
	seen := map[string]bool{}
	st.RecentTopics = st.RecentTopics[:0:0]
	for _, t := range topics {
		if !seen[t] && len(st.RecentTopics) < maxRecentTopics {
			seen[t] = true
			st.RecentTopics = append(st.RecentTopics, t)
		}
	}
	st.MessageTimes = append(st.MessageTimes, now)
	if len(st.MessageTimes) > maxMessageTimes {
		st.MessageTimes = st.MessageTimes[len(st.MessageTimes)-maxMessageTimes:]
	}
	st.UpdatedAt = now
}
