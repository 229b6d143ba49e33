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
	recentScan      = 1000 // surfacings read to find the last RecentTurns turns
)

// recentlySurfaced returns the memories shown in this conversation in its last RecentTurns
// turns; ambient recall does not repeat them (DESIGN.md §4.6).
func (p *Pipeline) recentlySurfaced(ctx context.Context, req *Request) (map[string]bool, error) {
	if req.Mode != models.ModeAmbient || req.ConversationID == "" {
		return nil, nil
	}
	ss, err := p.store.FindSurfacings(ctx, models.SurfacingFilter{
		Namespace: req.Namespace, ConversationID: req.ConversationID, Desc: true, Limit: recentScan,
	})
	if err != nil {
		return nil, err
	}
	turns := map[string]bool{}
	out := map[string]bool{}
	for _, s := range ss {
		if !turns[s.TurnID] {
			if len(turns) >= p.opts.RecentTurns {
				break
			}
			turns[s.TurnID] = true
		}
		out[s.MemoryID] = true
	}
	return out, nil
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
	var state *models.ConversationState
	if req.ConversationID != "" {
		st, err := p.store.GetConversation(ctx, req.Namespace, req.ConversationID)
		switch {
		case err == nil:
			state = st
		case models.ErrorCode(err) == models.ENOTFOUND:
			state = &models.ConversationState{Namespace: req.Namespace, ConversationID: req.ConversationID}
		default:
			return err
		}
		advance(state, in, now)
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
func advance(st *models.ConversationState, in *intake, now time.Time) {
	st.Turns++
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
