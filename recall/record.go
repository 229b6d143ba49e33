package recall

import (
	"context"
	"time"

	"github.com/salience-ai/salience/ids"
	"github.com/salience-ai/salience/models"
)

// Conversation-state bounds.
const (
	maxRecentTopics = 20
	maxMessageTimes = 20
)

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
