package recall

import (
	"context"
	"slices"
	"time"

	"github.com/salience-ai/salience/ids"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/predict"
)

// Conversation-state bounds.
const (
	maxRecentTopics = 20
	// maxMessageTimes: enough for momentum to pass predict.MaxMomentum (more than 25
	// messages in 5 minutes), so gate 3 can stop a fast conversation on turns alone.
	maxMessageTimes = 30
)

// record stores one Surfacing per result, moves the surfaced memories' counters and the
// conversation's state (docs/design.md#record). A startup package records only the state: see
// tracked.
func (p *Pipeline) record(ctx context.Context, req *Request, in *intake, resp *Response, results []Result) error {
	now := req.Now.UTC()
	var ss []*models.Surfacing
	for i := range results {
		r := &results[i]
		if tracked(req.Mode) {
			s := surfacing(req, in, resp, r, i+1, now)
			r.SurfacingID = s.ID
			ss = append(ss, s)
		}
		if !req.Explain {
			r.Components = nil // the surfacing keeps them
		}
	}
	if pr := resp.Proactive; pr != nil {
		ss = append(ss, p.predictSurfacings(req, in, pr, pr.Threshold, resp.Variant, resp.Experiment, resp.SettingsVersion)...)
	}
	state := in.state
	if state != nil {
		shown := make([]string, len(results))
		for i := range results {
			shown[i] = results[i].Memory.ID
		}
		if pr := resp.Proactive; pr != nil {
			for _, v := range pr.Predictions {
				shown = append(shown, v.MemoryID)
			}
		}
		advance(state, in, shown, p.opts.RecentTurns, now)
	}
	if len(ss) == 0 && state == nil {
		return nil
	}
	if len(req.Sources) == 0 {
		return p.store.RecordSurfacings(ctx, ss, state)
	}
	// A surfacing lands in the namespace of its memory, where engagement on it is reported
	// and learned from. The conversation's state is the home namespace's. Each namespace's
	// turn is one atomic write; the turn across namespaces is not.
	byNS := map[string][]*models.Surfacing{req.Namespace: nil}
	order := []string{req.Namespace}
	for _, s := range ss {
		if _, ok := byNS[s.Namespace]; !ok {
			order = append(order, s.Namespace)
		}
		byNS[s.Namespace] = append(byNS[s.Namespace], s)
	}
	for i, ns := range order {
		var st *models.ConversationState
		if i == 0 {
			st = state
		}
		if len(byNS[ns]) == 0 && st == nil {
			continue
		}
		if err := p.store.RecordSurfacings(ctx, byNS[ns], st); err != nil {
			return err
		}
	}
	return nil
}

// surfacing is the record of one result shown at rank.
func surfacing(req *Request, in *intake, resp *Response, r *Result, rank int, now time.Time) *models.Surfacing {
	mode := req.Mode
	for _, reason := range r.Reasons {
		if reason == "resurface" && req.Mode == models.ModeAmbient {
			mode = models.ModeResurface
		}
	}
	ns := r.Memory.Namespace
	if ns == "" {
		ns = req.Namespace
	}
	s := &models.Surfacing{
		ID: ids.New(now), Namespace: ns, ConversationID: req.ConversationID,
		TurnID: in.turnID, MemoryID: r.Memory.ID, Mode: mode, Rank: rank, Score: r.Score,
		ConvType: in.convType, Threshold: resp.Threshold, ArmProb: resp.ArmProb, Variant: resp.Variant, Experiment: resp.Experiment,
		Concepts: in.concepts, LatencyMS: resp.LatencyMS, SettingsVersion: resp.SettingsVersion, At: now,
		Terms: in.learnable, PUse: r.PUse, ModelVersion: in.model.N,
	}
	if m, ok := in.sourceModels[ns]; ok {
		s.ModelVersion = m.N // the model of the namespace the surfacing lands in
	}
	if r.Components != nil {
		s.Components = *r.Components
	}
	return s
}

// tracked reports whether the results of a mode are engagement-tracked surfacings: recorded,
// counted on their memories, and implicitly ignored when no report comes.
//
// A startup package is not (issue 8): it is what a bot loads when it starts, not memories
// shown for a turn, so there is no reply that could use or pass over them. Tracked, every
// restart counted as a showing toward each memory's wallpaper penalty and, half an hour
// later, as an implicit ignore — a bot that restarted five times lowered the confidence of
// its own latest turns from 0.5 to 0.40. Recorded but skipped by the implicit-ignore job
// would have fixed the second only, and put a recall rule into a maintenance job. The
// conversation's state still moves, so ambient recall does not repeat what the package
// just showed.
func tracked(mode models.Mode) bool { return mode != models.ModeStartup }

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
	st.RecentTurns = append(st.RecentTurns, slices.Clone(in.concepts))
	if len(st.RecentTurns) > predict.TransitionWindow {
		st.RecentTurns = st.RecentTurns[len(st.RecentTurns)-predict.TransitionWindow:]
	}
	st.MessageTimes = append(st.MessageTimes, now)
	if len(st.MessageTimes) > maxMessageTimes {
		st.MessageTimes = st.MessageTimes[len(st.MessageTimes)-maxMessageTimes:]
	}
	st.UpdatedAt = now
}
