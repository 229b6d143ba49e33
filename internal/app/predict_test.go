package app

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/salience-ai/salience/api"
)

// Conversations of the prediction test: a Kubernetes deploy fails, then the Helm chart is
// the topic, and the bot uses the Helm memory.
const (
	kubeTurn = "The Kubernetes deploy failed again"
	helmTurn = "Now the Helm chart is broken"
)

func (s *testServer) predict(ns string, req api.PredictRequest) api.PredictResponse {
	s.t.Helper()
	b, _ := json.Marshal(req)
	var out api.PredictResponse
	s.must("POST", "/v1/namespaces/"+ns+"/predict", string(b), "", 200, &out)
	return out
}

func (s *testServer) report(ns string, events ...api.EngagementEvent) {
	s.t.Helper()
	b, _ := json.Marshal(api.EngagementRequest{Events: events})
	var out api.EngagementResponse
	s.must("POST", "/v1/namespaces/"+ns+"/engagement", string(b), "", 200, &out)
	for _, r := range out.Results {
		if r.Status != "applied" {
			s.t.Fatalf("engagement %+v not applied", r)
		}
	}
}

func judgedOf(ps []api.PredictedMemory, id string) *api.PredictedMemory {
	for i := range ps {
		if ps[i].Memory.ID == id {
			return &ps[i]
		}
	}
	return nil
}

// TestPredictEndToEnd runs proactive prediction through the real server: conversations in
// which the Helm turn follows the Kubernetes turn (and the bot uses the Helm memory) teach
// it; a new conversation's Kubernetes turn then gets the Helm memory predicted, as the
// ambient option and over POST …/predict; the gates that stop it say which; and after a
// restart the models, rebuilt from the stored turns, predict it again.
func TestPredictEndToEnd(t *testing.T) {
	s := startServer(t, "")
	const ns = "predict"
	ms := s.ingest(ns, `{"memories":[{"kind":"fact","content":"Helm chart values for staging live in the ops repo."},
		{"kind":"fact","content":"The harbour ferry leaves at seven every morning."}]}`, "")
	helm := ms[0].ID
	for i := range 3 {
		conv := fmt.Sprintf("train-%d", i)
		s.recall(ns, api.RecallRequest{ConversationID: conv, Query: kubeTurn}, "")
		r := s.recall(ns, api.RecallRequest{ConversationID: conv, Query: helmTurn}, "")
		k := slices.IndexFunc(r.Results, func(x api.RecallResult) bool { return x.ID == helm })
		if k < 0 {
			t.Fatalf("the Helm turn did not recall the Helm memory: %v", resultIDs(r.Results))
		}
		s.report(ns, api.EngagementEvent{ID: "use-" + conv, SurfacingID: r.Results[k].SurfacingID, Type: "used"})
	}
	// A conversation whose Kubernetes turn asked for no prediction.
	s.recall(ns, api.RecallRequest{ConversationID: "quiet", Query: kubeTurn}, "")

	// A new conversation's Kubernetes turn with the proactive option.
	r := s.recall(ns, api.RecallRequest{ConversationID: "new", Query: kubeTurn, Proactive: true, Explain: true}, "")
	if slices.Contains(resultIDs(r.Results), helm) {
		t.Fatal("the Kubernetes turn recalled the Helm memory directly; the test needs prediction alone to reach it")
	}
	if len(r.Predictions) != 1 || r.Predictions[0].Memory.ID != helm || r.Predictions[0].SurfacingID == "" || r.Proactive == nil {
		t.Fatalf("proactive recall: predictions %+v, proactive %+v; want the Helm memory", r.Predictions, r.Proactive)
	}
	p := r.Predictions[0]
	// Learned: kubernetes seen in 4 turns (3 training, quiet), followed by helm in 3; helm's
	// base rate over 7 turns is 1 − (4/7)³; smoothed with strength 2.
	wantConf := (3 + 2*(1-math.Pow(4.0/7, 3))) / 6
	if math.Abs(p.Confidence-wantConf) > 1e-9 || !slices.Equal(p.Matches, []string{"kubernetes", "deploy", "failed"}) ||
		p.LeadTurns != 1 || p.Reason == "" || p.Confidence < r.Proactive.Threshold {
		t.Errorf("prediction %+v, want confidence %v, matches [kubernetes deploy failed], lead 1, a reason", p, wantConf)
	}
	// Engagement on a predicted memory is reported like any other.
	s.report(ns, api.EngagementEvent{ID: "use-new", SurfacingID: p.SurfacingID, Type: "used"})

	// POST …/predict from the quiet conversation's last turn.
	out := s.predict(ns, api.PredictRequest{ConversationID: "quiet", Explain: true})
	if len(out.Predictions) != 1 || out.Predictions[0].Memory.ID != helm || out.Predictions[0].SurfacingID == "" ||
		math.Abs(out.Predictions[0].Confidence-wantConf) > 1e-9 || out.ThresholdPolicy != "bandit" || out.Threshold <= 0 {
		t.Fatalf("predict = %+v", out)
	}
	if len(out.Topics) == 0 || out.Momentum <= 0 {
		t.Errorf("topics %+v momentum %v", out.Topics, out.Momentum)
	}
	first := out.Predictions[0].SurfacingID

	// Gate 3: thirty messages in the last two minutes are 6 a minute.
	now := time.Now().UTC()
	var fast []api.Message
	for i := range 30 { // oldest first, as a conversation reads
		fast = append(fast, api.Message{Content: "ok", At: now.Add(time.Duration(i-29) * 4 * time.Second)})
	}
	fast[29].Content = kubeTurn
	out = s.predict(ns, api.PredictRequest{ConversationID: "fast", Messages: fast, Explain: true})
	if j := judgedOf(out.Judged, helm); len(out.Predictions) != 0 || j == nil || j.BlockedBy != "momentum_too_high" || out.Momentum != 6 {
		t.Errorf("fast conversation: %+v; want the Helm memory blocked by momentum_too_high at 6/min", out)
	}

	// Gate 4: two dismissals count 4 recent dismissals.
	second := s.predict(ns, api.PredictRequest{ConversationID: "other", Messages: []api.Message{{Content: kubeTurn}}})
	if len(second.Predictions) != 1 {
		t.Fatalf("second prediction = %+v", second)
	}
	s.report(ns, api.EngagementEvent{ID: "dismiss-1", SurfacingID: first, Type: "dismissed"},
		api.EngagementEvent{ID: "dismiss-2", SurfacingID: second.Predictions[0].SurfacingID, Type: "dismissed"})
	out = s.predict(ns, api.PredictRequest{ConversationID: "quiet", Explain: true})
	if j := judgedOf(out.Judged, helm); len(out.Predictions) != 0 || j == nil || j.BlockedBy != "recently_dismissed" || j.Reason != "" {
		t.Errorf("after dismissals: %+v; want the Helm memory blocked by recently_dismissed", out)
	}

	// Restart: the models are rebuilt from the stored turns, now with the quiet and new
	// conversations' (kubernetes seen 5 times, helm after it 3; base rate over 8 turns).
	if err := s.m.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := startServer(t, s.dir)
	out = s2.predict(ns, api.PredictRequest{ConversationID: "quiet", Explain: true})
	j := judgedOf(out.Judged, helm)
	wantConf = (3 + 2*(1-math.Pow(5.0/8, 3))) / 7
	if j == nil || math.Abs(j.Confidence-wantConf) > 1e-9 || j.BlockedBy != "recently_dismissed" {
		t.Errorf("after restart: %+v; want the Helm memory judged at %v, still recently dismissed", out, wantConf)
	}
	// The conversation's last turn survived too: predicting from it needs no messages.
	if len(out.Topics) == 0 || !slices.ContainsFunc(out.Topics, func(tp api.PredictedTopic) bool { return tp.Concept == "helm" }) {
		t.Errorf("after restart topics = %+v", out.Topics)
	}
}
