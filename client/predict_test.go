package client_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/client"
	"github.com/salience-ai/salience/internal/testserver"
)

// TestPredictThroughTheClient: conversations whose Helm turn follows the Kubernetes turn,
// with the Helm memory used, teach the server; a new conversation's Kubernetes turn then
// gets it predicted through ns.Recall's Proactive option and ns.Predict, and a report on a
// prediction's surfacing is applied.
func TestPredictThroughTheClient(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	c := newClient(t, srv, testserver.NewValidator(t, nil))
	ctx := context.Background()
	ns := c.Namespace("predict")
	helm, err := ns.Store(ctx, api.MemoryInput{Kind: "fact", Content: "Helm chart values for staging live in the ops repo."})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		conv := fmt.Sprintf("train-%d", i)
		if _, err := ns.Recall(ctx, api.RecallRequest{ConversationID: conv, Query: "The Kubernetes deploy failed again"}); err != nil {
			t.Fatal(err)
		}
		r, err := ns.Recall(ctx, api.RecallRequest{ConversationID: conv, Query: "Now the Helm chart is broken"})
		if err != nil {
			t.Fatal(err)
		}
		k := slices.IndexFunc(r.Results, func(x api.RecallResult) bool { return x.ID == helm.ID })
		if k < 0 {
			t.Fatalf("the Helm turn did not recall the Helm memory: %+v", r.Results)
		}
		if _, err := ns.Report(ctx, api.EngagementEvent{SurfacingID: r.Results[k].SurfacingID, Type: client.EventUsed}); err != nil {
			t.Fatal(err)
		}
	}
	r, err := ns.Recall(ctx, api.RecallRequest{ConversationID: "new", Query: "The Kubernetes deploy failed again", Proactive: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Predictions) != 1 || r.Predictions[0].Memory.ID != helm.ID || r.Predictions[0].SurfacingID == "" || r.Proactive == nil ||
		r.Proactive.Judged != nil {
		t.Fatalf("proactive recall: %+v %+v", r.Predictions, r.Proactive)
	}
	res, err := ns.Report(ctx, api.EngagementEvent{SurfacingID: r.Predictions[0].SurfacingID, Type: client.EventHelpful})
	if err != nil || res.Applied != 1 {
		t.Fatalf("report on a prediction = %+v, %v", res, err)
	}
	p, err := ns.Predict(ctx, api.PredictRequest{ConversationID: "other", Messages: []api.Message{{Content: "The Kubernetes deploy failed again"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Predictions) != 1 || p.Predictions[0].Memory.ID != helm.ID || p.Predictions[0].Reason == "" ||
		!slices.Equal(p.Predictions[0].Matches, []string{"kubernetes", "deploy", "failed"}) {
		t.Fatalf("predict = %+v", p)
	}
	// Bad input comes back as the server's error, naming the field.
	_, err = ns.Predict(ctx, api.PredictRequest{ConversationID: "c", ConversationType: "chit-chat"})
	var e *client.Error
	if !errors.As(err, &e) || e.Code != client.CodeInvalid || e.Field != "conversation_type" {
		t.Errorf("bad conversation type: %v, want invalid naming conversation_type", err)
	}
}
