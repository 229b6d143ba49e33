package server

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/recall"
)

// Predictor answers proactive prediction requests (recall.Pipeline).
type Predictor interface {
	Predict(ctx context.Context, req *recall.PredictRequest) (*recall.PredictResponse, error)
}

// predict handles POST /v1/namespaces/:ns/predict.
func (s *Server) predict(c *gin.Context) {
	if s.predictor == nil {
		fail(c, models.Errorf(models.EUNAVAILABLE, "proactive prediction is not configured on this server"))
		return
	}
	body, err := readBody(c.Request)
	if err != nil {
		fail(c, err)
		return
	}
	req, err := decodePredictBody(body, c.Param("ns"))
	if err != nil {
		fail(c, err)
		return
	}
	req.Now = s.now()
	resp, err := s.predictor.Predict(c.Request.Context(), req)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, predictResponseToAPI(resp))
}

// decodePredictBody decodes a predict body into the pipeline's request.
func decodePredictBody(body []byte, ns string) (*recall.PredictRequest, error) {
	var in api.PredictRequest
	if err := decodeStrict(body, &in); err != nil {
		return nil, err
	}
	if err := validateConversationType(in.ConversationType); err != nil {
		return nil, err
	}
	req := &recall.PredictRequest{Namespace: ns, ConversationID: in.ConversationID, TurnID: in.TurnID,
		Entities: in.Entities, ConversationType: in.ConversationType, Explain: in.Explain}
	if len(in.Messages) > 0 {
		req.Messages = make([]recall.Message, len(in.Messages))
		for i, m := range in.Messages {
			req.Messages[i] = recall.Message{Speaker: m.Speaker, Content: m.Content, At: m.At}
		}
	}
	return req, nil
}

func predictResponseToAPI(r *recall.PredictResponse) *api.PredictResponse {
	out := &api.PredictResponse{
		Predictions:      predictionsToAPI(r.Predictions),
		Proactive:        *proactiveToAPI(&r.Proactive),
		TurnID:           r.TurnID,
		ConversationType: r.ConversationType,
		ThresholdPolicy:  r.Policy,
		Variant:          r.Variant,
		Experiment:       r.Experiment,
		SettingsVersion:  r.SettingsVersion,
		Degraded:         r.Degraded,
	}
	return out
}

// proactiveToAPI is what the predictions were judged on; the surfaced ones go apart.
func proactiveToAPI(p *recall.Proactive) *api.Proactive {
	out := &api.Proactive{Topics: make([]api.PredictedTopic, len(p.Topics)), Momentum: p.Momentum, Threshold: p.Threshold}
	for i, t := range p.Topics {
		out.Topics[i] = api.PredictedTopic{Concept: t.Concept, P: t.P, From: t.From}
	}
	if len(p.Judged) > 0 {
		out.Judged = predictionsToAPI(p.Judged)
	}
	return out
}

func predictionsToAPI(ps []recall.Prediction) []api.PredictedMemory {
	out := make([]api.PredictedMemory, len(ps))
	for i := range ps {
		p := &ps[i]
		out[i] = api.PredictedMemory{SurfacingID: p.SurfacingID, Confidence: p.Confidence, Topic: p.Topic, From: p.From,
			Matches: p.Matches, LeadTurns: p.Lead, Surfaced: p.Surfaced, Reason: p.Reason, BlockedBy: p.Blocked}
		if out[i].Matches == nil {
			out[i].Matches = []string{}
		}
		if p.Memory != nil {
			out[i].Memory = memoryToAPI(p.Memory)
		}
	}
	return out
}
