package server

import (
	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/recall"
)

// Conversions between wire types (api) and domain types (models, recall). The domain structs
// never carry wire concerns and the wire structs never carry storage ones.

func memoryFromInput(in *api.MemoryInput) *models.Memory {
	m := &models.Memory{
		Kind:       models.Kind(in.Kind),
		Content:    in.Content,
		CreatedAt:  in.CreatedAt,
		ValidAt:    in.ValidAt,
		InvalidAt:  in.InvalidAt,
		Importance: in.Importance,
		Domains:    in.Domains,
		Triggers:   in.Triggers,
		Concepts:   in.Concepts,
		Sensitive:  in.Sensitive,
	}
	if in.Source != nil {
		src := in.Source
		m.Source = models.Source{ConversationID: src.ConversationID, MessageID: src.MessageID, Speaker: src.Speaker, Role: models.Role(src.Role)}
	}
	if in.Triple != nil {
		t := models.Triple(*in.Triple)
		m.Triple = &t
	}
	return m
}

func memoryToAPI(m *models.Memory) api.Memory {
	out := api.Memory{
		ID:               m.ID,
		Namespace:        m.Namespace,
		Kind:             string(m.Kind),
		Content:          m.Content,
		CreatedAt:        m.CreatedAt,
		ValidAt:          m.ValidAt,
		InvalidAt:        m.InvalidAt,
		Source:           sourceToAPI(m.Source),
		Importance:       m.Importance,
		Domains:          m.Domains,
		Triggers:         m.Triggers,
		Concepts:         m.Concepts,
		Sensitive:        m.Sensitive,
		ChunkCount:       m.ChunkCount,
		Confidence:       m.Confidence,
		UsageCount:       m.UsageCount,
		LastUsed:         m.LastUsed,
		SurfaceCount:     m.SurfaceCount,
		LastSurfaced:     m.LastSurfaced,
		RecentDismissals: m.RecentDismissals,
	}
	if m.Triple != nil {
		t := api.Triple(*m.Triple)
		out.Triple = &t
	}
	out.Learned = learnedToAPI(m.Learned)
	return out
}

func learnedToAPI(ls []models.LearnedTerm) []api.LearnedTerm {
	if len(ls) == 0 {
		return nil
	}
	out := make([]api.LearnedTerm, len(ls))
	for i, l := range ls {
		out[i] = api.LearnedTerm{Term: l.Term, Weight: l.Weight, At: l.At}
	}
	return out
}

func memoriesToAPI(ms []*models.Memory) []api.Memory {
	out := make([]api.Memory, len(ms))
	for i, m := range ms {
		out[i] = memoryToAPI(m)
	}
	return out
}

func sourceToAPI(s models.Source) *api.Source {
	if s == (models.Source{}) {
		return nil
	}
	return &api.Source{ConversationID: s.ConversationID, MessageID: s.MessageID, Speaker: s.Speaker, Role: string(s.Role)}
}

// recallRequest maps the wire request to the pipeline's; the pipeline validates it and names
// the JSON fields of whatever is wrong.
func recallRequest(ns string, in *api.RecallRequest) *recall.Request {
	req := &recall.Request{
		Namespace:        ns,
		ConversationID:   in.ConversationID,
		TurnID:           in.TurnID,
		Mode:             models.Mode(in.Mode),
		Query:            in.Query,
		Entities:         in.Entities,
		ConversationType: in.ConversationType,
		FocalEntity:      in.FocalEntity,
		Limit:            in.Limit,
		TokenBudget:      in.TokenBudget,
		Rerank:           in.Rerank,
		Since:            in.Since,
		Until:            in.Until,
		IncludeInvalid:   in.IncludeInvalid,
		Explain:          in.Explain,
		Sources:          in.Namespaces,
		ThresholdPolicy:  in.ThresholdPolicy,
		Proactive:        in.Proactive,
	}
	req.LatencyBudget = msDuration(in.LatencyBudgetMS)
	if len(in.Messages) > 0 {
		req.Messages = make([]recall.Message, len(in.Messages))
		for i, m := range in.Messages {
			req.Messages[i] = recall.Message{Speaker: m.Speaker, Content: m.Content, At: m.At}
		}
	}
	if len(in.Kinds) > 0 {
		req.Kinds = make([]models.Kind, len(in.Kinds))
		for i, k := range in.Kinds {
			req.Kinds[i] = models.Kind(k)
		}
	}
	return req
}

func recallResponseToAPI(r *recall.Response) *api.RecallResponse {
	out := &api.RecallResponse{
		Results:          make([]api.RecallResult, 0, len(r.Results)),
		Context:          r.Context,
		TurnID:           r.TurnID,
		ConversationType: r.ConversationType,
		Threshold:        r.Threshold,
		ThresholdPolicy:  r.Policy,
		ArmProbability:   r.ArmProb,
		Variant:          r.Variant,
		Experiment:       r.Experiment,
		SettingsVersion:  r.SettingsVersion,
		Rerank:           api.RerankStatus{Status: r.Rerank.Status, Reason: r.Rerank.Reason},
		Degraded:         r.Degraded,
		LatencyMS:        r.LatencyMS,
		Stages:           r.Stages,
	}
	for _, res := range r.Results {
		out.Results = append(out.Results, recallResultToAPI(&res))
	}
	if r.Startup != nil {
		st := api.Startup(*r.Startup)
		out.Startup = &st
	}
	if r.Proactive != nil {
		out.Predictions = predictionsToAPI(r.Proactive.Predictions)
		out.Proactive = proactiveToAPI(r.Proactive)
	}
	return out
}

func recallResultToAPI(res *recall.Result) api.RecallResult {
	out := api.RecallResult{
		SurfacingID: res.SurfacingID,
		Content:     res.Content,
		Score:       res.Score,
		PUse:        res.PUse,
		Reasons:     res.Reasons,
		Volunteered: res.Volunteered,
	}
	if m := res.Memory; m != nil {
		out.ID = m.ID
		out.Namespace = m.Namespace
		out.Kind = string(m.Kind)
		out.CreatedAt = m.CreatedAt
		out.ValidAt = m.ValidAt
		out.Source = sourceToAPI(m.Source)
	}
	if f := res.Fragment; f != nil {
		out.Fragment = &api.Fragment{ParentID: f.ParentID, Index: f.Index, Count: f.Count}
	}
	if c := res.Components; c != nil {
		out.Components = componentsToAPI(c)
		out.Components.Model, out.Components.Lambda = res.Model, res.Lambda
		out.Components.Learned = learnedToAPI(res.Learned)
	}
	return out
}

// componentsToAPI copies the score components field by field, so the domain type can grow
// without breaking the wire type; TestComponentsCoverTheModel notices a component missing here.
func componentsToAPI(c *models.Components) *api.Components {
	return &api.Components{
		Relevance:  c.Relevance,
		BM25:       c.BM25,
		Vector:     c.Vector,
		Phrase:     c.Phrase,
		Activation: c.Activation,
		Confidence: c.Confidence,
		Freshness:  c.Freshness,
		Proximity:  c.Proximity,
		Importance: c.Importance,
		Novelty:    c.Novelty,
		Volunteer:  c.Volunteer,

		WeightedScore: c.Score,
		Coverage:      c.Coverage,
		Match:         c.Match,
		Used:          c.Used,
		Speaker:       c.Speaker,
		Turn:          c.Turn,
		Top:           c.Top,
		Margin:        c.Margin,
		Question:      c.Question,
		Features:      c.Features,
	}
}
