package server

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/predict"
	"github.com/salience-ai/salience/recall"
)

// fakePredictor records the request it was given and answers with one surfaced and one
// blocked prediction, or with err.
type fakePredictor struct {
	got *recall.PredictRequest
	err error
}

func (f *fakePredictor) Predict(_ context.Context, req *recall.PredictRequest) (*recall.PredictResponse, error) {
	f.got = req
	if f.err != nil {
		return nil, f.err
	}
	m := &models.Memory{ID: "01JHELM", Namespace: req.Namespace, Kind: models.KindFact, Content: "Helm values live in ops.",
		CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Confidence: 0.5}
	surfaced := recall.Prediction{Prediction: predict.Prediction{MemoryID: m.ID, Confidence: 0.9, Topic: "helm", From: "kubernetes",
		Matches: []string{"kubernetes", "deploy"}, Lead: 1, Surfaced: true}, Memory: m, SurfacingID: "01JSURF", Reason: "passed"}
	blocked := recall.Prediction{Prediction: predict.Prediction{MemoryID: "01JOTHER", Confidence: 0.2, Topic: "chart", From: "deploy",
		Blocked: predict.ReasonThreshold}, Memory: &models.Memory{ID: "01JOTHER", Namespace: req.Namespace, Kind: models.KindFact, Content: "x"}}
	resp := &recall.PredictResponse{TurnID: "t1", ConversationType: models.ConvDebugging, Policy: predict.PolicyBandit}
	resp.Predictions = []recall.Prediction{surfaced}
	resp.Topics = []predict.Topic{{Concept: "helm", P: 0.9, From: "kubernetes"}}
	resp.Momentum, resp.Threshold = 0.4, 0.2
	if req.Explain {
		resp.Judged = []recall.Prediction{surfaced, blocked}
	}
	return resp, nil
}

func TestPredictRoute(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	fp := &fakePredictor{}
	s, _ := newTestServer(t, Config{Predictor: fp, Now: func() time.Time { return now }})
	res, body := do(t, s.Handler(), "POST", "/v1/namespaces/a/predict", `{"conversation_id":"c1","turn_id":"t1",
		"messages":[{"speaker":"u","content":"the Kubernetes deploy failed","at":"2026-05-01T11:59:00Z"}],
		"entities":["Kubernetes"],"conversation_type":"debugging","explain":true}`)
	if res.StatusCode != 200 {
		t.Fatalf("status %d %s", res.StatusCode, body)
	}
	g := fp.got
	if g.Namespace != "a" || g.ConversationID != "c1" || g.TurnID != "t1" || len(g.Messages) != 1 || g.Messages[0].Content != "the Kubernetes deploy failed" ||
		!g.Messages[0].At.Equal(now.Add(-time.Minute)) || len(g.Entities) != 1 || g.ConversationType != models.ConvDebugging || !g.Explain || !g.Now.Equal(now) {
		t.Errorf("request = %+v", g)
	}
	var out api.PredictResponse
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Predictions) != 1 || out.Predictions[0].Memory.ID != "01JHELM" || out.Predictions[0].SurfacingID != "01JSURF" ||
		out.Predictions[0].Reason != "passed" || out.Predictions[0].LeadTurns != 1 || out.Threshold != 0.2 || out.Momentum != 0.4 ||
		out.ThresholdPolicy != "bandit" || len(out.Topics) != 1 || out.Topics[0].From != "kubernetes" {
		t.Errorf("response = %s", body)
	}
	if len(out.Judged) != 2 || out.Judged[1].BlockedBy != predict.ReasonThreshold || out.Judged[1].Surfaced || out.Judged[1].Matches == nil {
		t.Errorf("judged = %+v", out.Judged)
	}

	// Bad input is a 400 naming the field; the predictor never sees it.
	for _, tc := range []struct{ body, field string }{
		{`{"conversation_id":"c","conversation_type":"chit-chat"}`, "conversation_type"},
		{`{"conversation_id":"c","mode":"search"}`, "mode"},
		{`{"conversation_id":"c","messages":[{"content":"x","at":"yesterday"}]}`, "messages[0].at"},
		{`{"conversation_id":"c","explain":"yes"}`, "explain"},
	} {
		fp.got = nil
		res, body := do(t, s.Handler(), "POST", "/v1/namespaces/a/predict", tc.body)
		if e := errorOf(t, body); res.StatusCode != 400 || e.Field != tc.field || fp.got != nil {
			t.Errorf("%s = %d %s, want 400 on %s", tc.body, res.StatusCode, body, tc.field)
		}
	}
	// The pipeline's own validation comes back as a 400 too.
	fp.err = models.Invalid("conversation_id", "conversation_id is required")
	res, body = do(t, s.Handler(), "POST", "/v1/namespaces/a/predict", `{"conversation_id":""}`)
	if e := errorOf(t, body); res.StatusCode != 400 || e.Field != "conversation_id" {
		t.Errorf("empty conversation = %d %s", res.StatusCode, body)
	}

	// Without a predictor the route says it is unavailable.
	s2, _ := newTestServer(t, Config{})
	res, body = do(t, s2.Handler(), "POST", "/v1/namespaces/a/predict", `{"conversation_id":"c"}`)
	if e := errorOf(t, body); res.StatusCode != 503 || e.Code != "unavailable" {
		t.Errorf("no predictor = %d %s", res.StatusCode, body)
	}
}
