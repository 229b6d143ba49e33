package recall_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/salience-ai/salience/embed"
	"github.com/salience-ai/salience/ids"
	"github.com/salience-ai/salience/ingest"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/predict"
	"github.com/salience-ai/salience/recall"
	"github.com/salience-ai/salience/store/sqlite"
)

// The conversations the prediction tests learn from: a Kubernetes deploy fails, and the
// next turn is about the Helm chart, whose memory the bot then uses.
const (
	kubeTurn = "The Kubernetes deploy failed again"
	helmTurn = "Now the Helm chart is broken"
)

func openPredictEnv(t *testing.T, path string, opts recall.Options) (*sqlite.Store, *recall.Pipeline, *ingest.Service) {
	t.Helper()
	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	emb := embed.NewLocal(0)
	if opts.Now == nil {
		opts.Now = func() time.Time { return t0 }
	}
	return st, recall.New(st, emb, opts), ingest.New(st, emb, ingest.Options{Now: func() time.Time { return t0 }})
}

// trainConversation runs one conversation of two ambient turns, kubeTurn then helmTurn,
// and records that the Helm memory was used in the second.
func trainConversation(t *testing.T, st models.Store, p *recall.Pipeline, ns, conv, helmID string, at time.Time) {
	t.Helper()
	ctx := context.Background()
	if _, err := p.Recall(ctx, &recall.Request{Namespace: ns, ConversationID: conv, Query: kubeTurn, Now: at}); err != nil {
		t.Fatal(err)
	}
	r2, err := p.Recall(ctx, &recall.Request{Namespace: ns, ConversationID: conv, Query: helmTurn, Now: at.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range r2.Results {
		if r.Memory.ID == helmID {
			err := st.Update(ctx, func(tx models.Tx) error {
				s, err := tx.GetSurfacing(ns, r.SurfacingID)
				if err != nil {
					return err
				}
				s.Outcome = models.EventUsed
				return tx.PutSurfacing(s)
			})
			if err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	// Not shown by recall: the bot found it another way; the use is recorded all the same.
	s := &models.Surfacing{ID: ids.New(at), Namespace: ns, ConversationID: conv, TurnID: r2.TurnID, MemoryID: helmID,
		Mode: models.ModeSearch, Rank: 1, At: at.Add(time.Minute), Outcome: models.EventUsed}
	if err := st.RecordSurfacings(ctx, []*models.Surfacing{s}, nil); err != nil {
		t.Fatal(err)
	}
}

func judged(ps []recall.Prediction, id string) *recall.Prediction {
	for i := range ps {
		if ps[i].MemoryID == id {
			return &ps[i]
		}
	}
	return nil
}

// TestPredictLearnsFromConversations: after three conversations in which the Helm turn
// follows the Kubernetes turn, a new conversation's Kubernetes turn gets the Helm memory
// predicted — over the predict call and as ambient recall's proactive option — with a
// surfacing of mode predict; each gate that stops it says so; and a reopened store predicts
// the same.
func TestPredictLearnsFromConversations(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	st, p, ing := openPredictEnv(t, path, recall.Options{})
	const ns = "a"
	ms, err := ing.Ingest(ctx, ns, []*models.Memory{
		{Kind: models.KindFact, Content: "Helm chart values for staging live in the ops repo.", CreatedAt: t0.Add(-time.Hour)},
		{Kind: models.KindFact, Content: "The harbour ferry leaves at seven every morning.", CreatedAt: t0.Add(-time.Hour)},
	})
	if err != nil {
		t.Fatal(err)
	}
	helm := ms[0].ID
	for i := range 3 {
		trainConversation(t, st, p, ns, fmt.Sprintf("train-%d", i), helm, t0.Add(time.Duration(i)*10*time.Minute))
	}
	now := t0.Add(time.Hour)

	// A new conversation's first turn, with the proactive option.
	r, err := p.Recall(ctx, &recall.Request{Namespace: ns, ConversationID: "new", Query: kubeTurn, Proactive: true, Explain: true,
		ThresholdPolicy: "fixed:0.3", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(r.Results, func(x recall.Result) bool { return x.Memory.ID == helm }) {
		t.Fatal("the Helm memory matched the Kubernetes turn directly; the test needs it reached by prediction only")
	}
	pr := r.Proactive
	if pr == nil || len(pr.Predictions) != 1 || pr.Predictions[0].MemoryID != helm {
		t.Fatalf("proactive = %+v, want the Helm memory predicted", pr)
	}
	got := pr.Predictions[0]
	// P(helm within 3 turns | kubernetes): 3 of 3 windows, smoothed towards its base rate
	// 1 − (1 − 3/6)³ = 0.875 with strength 2: (3 + 1.75)/5 = 0.95.
	if got.Topic != "chart" && got.Topic != "helm" || got.Confidence < 0.94 || got.Confidence > 0.96 || pr.Threshold != 0.3 {
		t.Errorf("prediction %+v at threshold %v, want topic helm or chart at 0.95 over 0.3", got.Prediction, pr.Threshold)
	}
	// Its triggers were learned from the uses: the concepts of the turn before each.
	if !slices.Equal(got.Matches, []string{"kubernetes", "deploy", "failed"}) || got.Lead != 1 {
		t.Errorf("matches %v lead %v, want [kubernetes deploy failed] and 1", got.Matches, got.Lead)
	}
	if got.SurfacingID == "" || got.Reason == "" || got.Memory == nil || got.Memory.ID != helm {
		t.Errorf("prediction lacks its surfacing, reason or memory: %+v", got)
	}
	s, err := st.GetSurfacing(ctx, ns, got.SurfacingID)
	if err != nil || s.Mode != models.ModePredict || s.TurnID != r.TurnID || s.MemoryID != helm || s.ConversationID != "new" {
		t.Fatalf("surfacing = %+v, %v; want mode predict in the turn", s, err)
	}
	if len(pr.Judged) == 0 || pr.Judged[0].MemoryID != helm {
		t.Errorf("explain judged %+v", pr.Judged)
	}
	// The turn's decision keeps its concepts; the conversation its turn and what it surfaced.
	if err := st.Update(ctx, func(tx models.Tx) error {
		d, err := tx.GetDecision(ns, r.TurnID)
		if err == nil && !slices.Equal(d.Concepts, []string{"kubernetes", "deploy", "failed"}) {
			t.Errorf("decision concepts = %v", d.Concepts)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	cs, err := st.GetConversation(ctx, ns, "new")
	if err != nil || len(cs.RecentTurns) != 1 || !slices.Contains(cs.RecentSurfaced[0], helm) {
		t.Fatalf("conversation = %+v, %v", cs, err)
	}

	// The predict call, from a conversation's last recorded turn, which did not ask for it.
	if _, err := p.Recall(ctx, &recall.Request{Namespace: ns, ConversationID: "quiet", Query: kubeTurn, Now: now}); err != nil {
		t.Fatal(err)
	}
	predictHelm := func(p *recall.Pipeline, req recall.PredictRequest) *recall.PredictResponse {
		t.Helper()
		req.Namespace, req.ConversationID, req.Explain = ns, "quiet", true
		if req.Now.IsZero() {
			req.Now = now.Add(time.Minute)
		}
		resp, err := p.Predict(ctx, &req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := predictHelm(p, recall.PredictRequest{})
	if len(resp.Predictions) != 1 || resp.Predictions[0].MemoryID != helm || resp.Predictions[0].SurfacingID == "" {
		t.Fatalf("predict = %+v, want the Helm memory", resp.Proactive)
	}
	// The bandit's threshold in force for the type, without a decision: debugging or not,
	// no arm sits above 0.5.
	if resp.Policy != predict.PolicyBandit || resp.Threshold <= 0 || resp.Threshold > 0.5 {
		t.Errorf("policy %q threshold %v", resp.Policy, resp.Threshold)
	}
	if err := st.Update(ctx, func(tx models.Tx) error {
		_, err := tx.GetDecision(ns, resp.TurnID)
		if models.ErrorCode(err) != models.ENOTFOUND {
			t.Errorf("the predict call recorded a decision (%v)", err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(resp.Topics) == 0 || resp.Topics[0].From != "deploy" && resp.Topics[0].From != "kubernetes" && resp.Topics[0].From != "failed" {
		t.Errorf("topics = %+v", resp.Topics)
	}

	// Gate 3: thirty messages in the last two minutes are 6 a minute.
	var fast []recall.Message
	for i := range 30 { // oldest first, as a conversation reads
		fast = append(fast, recall.Message{Content: "ok", At: now.Add(time.Duration(i-29) * 4 * time.Second)})
	}
	fast[len(fast)-1].Content = kubeTurn
	resp = predictHelm(p, recall.PredictRequest{Messages: fast})
	if j := judged(resp.Judged, helm); len(resp.Predictions) != 0 || j == nil || j.Blocked != predict.ReasonMomentum || resp.Momentum != 6 {
		t.Errorf("fast conversation: predictions %+v, judged %+v, momentum %v; want blocked by %s", resp.Predictions, j, resp.Momentum, predict.ReasonMomentum)
	}

	// Gate 4: three recent dismissals.
	setDismissals(t, st, ns, helm, 3)
	resp = predictHelm(p, recall.PredictRequest{})
	if j := judged(resp.Judged, helm); len(resp.Predictions) != 0 || j == nil || j.Blocked != predict.ReasonDismissals || j.Reason != "" {
		t.Errorf("dismissed: predictions %+v, judged %+v; want blocked by %s", resp.Predictions, j, predict.ReasonDismissals)
	}

	// A restart: the models are a function of the stored log, so a reopened store predicts
	// what this server predicts once its cache has expired. The log now holds the two
	// conversations above too, whose Kubernetes turns nothing followed: kubernetes was seen
	// 5 times, followed by chart 3 times; chart's base rate is 1 − (1 − 3/8)³ = 0.755859375,
	// so P = (3 + 2·0.755859375)/(5 + 2).
	setDismissals(t, st, ns, helm, 0)
	const want = (3 + 2*0.755859375) / 7
	later := now.Add(10 * time.Minute)
	before := predictHelm(p, recall.PredictRequest{Now: later})
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st2, p2, _ := openPredictEnv(t, path, recall.Options{})
	defer st2.Close()
	after := predictHelm(p2, recall.PredictRequest{Now: later})
	for name, resp := range map[string]*recall.PredictResponse{"before the restart": before, "after": after} {
		if len(resp.Predictions) != 1 || resp.Predictions[0].MemoryID != helm || math.Abs(resp.Predictions[0].Confidence-want) > 1e-12 {
			t.Errorf("%s: %+v, want the Helm memory at %v", name, resp.Proactive, want)
		}
	}
}

// TestPredictModelsFollowTheLogAfterTheTTL: a namespace's models are cached for PredictTTL,
// then rebuilt with the turns recorded meanwhile.
func TestPredictModelsFollowTheLogAfterTheTTL(t *testing.T) {
	ctx := context.Background()
	st, p, ing := openPredictEnv(t, filepath.Join(t.TempDir(), "s.db"), recall.Options{PredictTTL: time.Minute})
	defer st.Close()
	const ns = "a"
	ms, err := ing.Ingest(ctx, ns, []*models.Memory{{Kind: models.KindFact, Content: "Helm chart values for staging live in the ops repo.", CreatedAt: t0}})
	if err != nil {
		t.Fatal(err)
	}
	ask := func(at time.Time) *recall.PredictResponse {
		t.Helper()
		resp, err := p.Predict(ctx, &recall.PredictRequest{Namespace: ns, ConversationID: "x", Messages: []recall.Message{{Content: kubeTurn}}, Now: at})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if resp := ask(t0); len(resp.Topics) != 0 || len(resp.Predictions) != 0 {
		t.Fatalf("nothing learned yet, but %+v", resp.Proactive)
	}
	for i := range 3 {
		trainConversation(t, st, p, ns, fmt.Sprintf("train-%d", i), ms[0].ID, t0.Add(time.Duration(i)*time.Second))
	}
	if resp := ask(t0.Add(59 * time.Second)); len(resp.Topics) != 0 {
		t.Fatalf("within the TTL the cached models answer, but topics %+v", resp.Topics)
	}
	resp := ask(t0.Add(time.Minute))
	if len(resp.Topics) == 0 || !slices.ContainsFunc(resp.Topics, func(tp predict.Topic) bool { return tp.Concept == "helm" }) {
		t.Fatalf("after the TTL: topics %+v, want helm", resp.Topics)
	}
	if len(resp.Predictions) != 1 || resp.Predictions[0].MemoryID != ms[0].ID {
		t.Fatalf("after the TTL: predictions %+v", resp.Predictions)
	}
	// Another server on the same store builds the same models from the same log.
	other := recall.New(st, embed.NewLocal(0), recall.Options{PredictTTL: time.Minute})
	theirs, err := other.Predict(ctx, &recall.PredictRequest{Namespace: ns, ConversationID: "y", Messages: []recall.Message{{Content: kubeTurn}},
		Now: t0.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(theirs.Topics, resp.Topics) || len(theirs.Predictions) != 1 ||
		theirs.Predictions[0].Confidence != resp.Predictions[0].Confidence || !slices.Equal(theirs.Predictions[0].Matches, resp.Predictions[0].Matches) {
		t.Errorf("a second server predicts %+v, the first %+v", theirs.Proactive, resp.Proactive)
	}
}

// TestPredictForget: Forget drops a namespace's cached models (its deletion), and only its.
func TestPredictForget(t *testing.T) {
	ctx := context.Background()
	st, p, ing := openPredictEnv(t, filepath.Join(t.TempDir(), "s.db"), recall.Options{PredictTTL: time.Hour})
	defer st.Close()
	const ns = "a"
	ms, err := ing.Ingest(ctx, ns, []*models.Memory{{Kind: models.KindFact, Content: "Helm chart values for staging live in the ops repo.", CreatedAt: t0}})
	if err != nil {
		t.Fatal(err)
	}
	helm := func(at time.Time) bool {
		t.Helper()
		resp, err := p.Predict(ctx, &recall.PredictRequest{Namespace: ns, ConversationID: "x", Messages: []recall.Message{{Content: kubeTurn}}, Now: at})
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(resp.Topics, func(tp predict.Topic) bool { return tp.Concept == "helm" })
	}
	if helm(t0) {
		t.Fatal("nothing learned yet, but helm predicted")
	}
	for i := range 3 {
		trainConversation(t, st, p, ns, fmt.Sprintf("train-%d", i), ms[0].ID, t0.Add(time.Duration(i)*time.Second))
	}
	p.Forget("b")
	p.Forget("a.b")
	if helm(t0.Add(time.Minute)) {
		t.Fatal("forgetting other namespaces dropped this one's models")
	}
	p.Forget(ns)
	if !helm(t0.Add(2 * time.Minute)) {
		t.Fatal("after Forget the models were not rebuilt from the log")
	}
}

func TestPredictBadRequests(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		req   recall.PredictRequest
		field string
	}{
		{recall.PredictRequest{Namespace: "a"}, "conversation_id"},
		{recall.PredictRequest{Namespace: "a", ConversationID: "  "}, "conversation_id"},
		{recall.PredictRequest{Namespace: "a b", ConversationID: "c"}, "namespace"},
		{recall.PredictRequest{Namespace: "a", ConversationID: "c", Messages: make([]recall.Message, recall.MaxMessages+1)}, "messages"},
		{recall.PredictRequest{Namespace: "a", ConversationID: "c", Entities: make([]string, recall.MaxEntities+1)}, "entities"},
	} {
		_, err := e.p.Predict(context.Background(), &tc.req)
		if models.ErrorCode(err) != models.EINVALID || models.ErrorField(err) != tc.field {
			t.Errorf("%+v: %v, want EINVALID on %s", tc.req, err, tc.field)
		}
	}
	_, err := e.p.Recall(context.Background(), &recall.Request{Namespace: "a", Mode: models.ModeSearch, Query: "x", Proactive: true})
	if models.ErrorCode(err) != models.EINVALID || models.ErrorField(err) != "proactive" {
		t.Errorf("proactive search: %v, want EINVALID on proactive", err)
	}
	// An unknown conversation with no messages has nothing to predict from.
	resp, err := e.p.Predict(context.Background(), &recall.PredictRequest{Namespace: "a", ConversationID: "never"})
	if err != nil || len(resp.Predictions) != 0 || len(resp.Topics) != 0 || resp.ConversationType != models.ConvOther {
		t.Errorf("unknown conversation: %+v, %v", resp, err)
	}
}

// TestPredictGatesOnline stops the learned Helm prediction with each gate alone, through the
// online path (store, models, candidates), and checks that explain names the gate.
func TestPredictGatesOnline(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	st, p, ing := openPredictEnv(t, path, recall.Options{})
	defer st.Close()
	const ns = "a"
	ms, err := ing.Ingest(ctx, ns, []*models.Memory{{Kind: models.KindFact, Content: "Helm chart values for staging live in the ops repo.", CreatedAt: t0}})
	if err != nil {
		t.Fatal(err)
	}
	helm := ms[0].ID
	for i := range 3 {
		trainConversation(t, st, p, ns, fmt.Sprintf("train-%d", i), helm, t0.Add(time.Duration(i)*10*time.Minute))
	}
	now := t0.Add(time.Hour)
	setMemory := func(f func(m *models.Memory)) {
		t.Helper()
		if err := st.Update(ctx, func(tx models.Tx) error {
			m, err := tx.GetMemory(ns, helm)
			if err != nil {
				return err
			}
			f(m)
			return tx.PutMemory(m)
		}); err != nil {
			t.Fatal(err)
		}
	}
	var fast []recall.Message
	for i := range 30 {
		fast = append(fast, recall.Message{Content: "ok", At: now.Add(time.Duration(i-29) * 4 * time.Second)})
	}
	fast[29].Content = kubeTurn
	strict := recall.New(st, embed.NewLocal(0), recall.Options{ThresholdPolicy: "fixed:0.99"})
	for _, tc := range []struct {
		name     string
		p        *recall.Pipeline
		messages []recall.Message
		memory   func(m *models.Memory)
		blocked  string
	}{
		{"passes every gate", p, []recall.Message{{Content: kubeTurn}}, nil, ""},
		{"1: a threshold above the confidence", strict, []recall.Message{{Content: kubeTurn}}, nil, predict.ReasonThreshold},
		{"2: one trigger of three in the context", p, []recall.Message{{Content: "What about Kubernetes?"}}, nil, predict.ReasonTriggers},
		{"3: six messages a minute", p, fast, nil, predict.ReasonMomentum},
		{"4: three recent dismissals", p, []recall.Message{{Content: kubeTurn}}, func(m *models.Memory) { m.RecentDismissals = 3 }, predict.ReasonDismissals},
		{"4: a dismissal's cooldown", p, []recall.Message{{Content: kubeTurn}}, func(m *models.Memory) { m.Schedule.CooldownTo = now.Add(time.Hour) }, predict.ReasonCooldown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.memory != nil {
				setMemory(tc.memory)
				defer setMemory(func(m *models.Memory) { m.RecentDismissals, m.Schedule.CooldownTo = 0, time.Time{} })
			}
			resp, err := tc.p.Predict(ctx, &recall.PredictRequest{Namespace: ns, ConversationID: "gates-" + tc.name, Messages: tc.messages,
				Explain: true, Now: now})
			if err != nil {
				t.Fatal(err)
			}
			j := judged(resp.Judged, helm)
			if j == nil {
				t.Fatalf("the Helm memory was not judged: %+v", resp.Proactive)
			}
			if j.Blocked != tc.blocked || j.Surfaced != (tc.blocked == "") || (len(resp.Predictions) == 1) != (tc.blocked == "") {
				t.Errorf("verdict %+v (surfaced %d), want blocked by %q", j.Prediction, len(resp.Predictions), tc.blocked)
			}
			if (j.Reason != "") != (tc.blocked == "") {
				t.Errorf("reason %q for a verdict blocked by %q", j.Reason, tc.blocked)
			}
		})
	}
}

// setDismissals sets a memory's decaying dismissal count (gate 4's signal).
func setDismissals(t *testing.T, st models.Store, ns, id string, n float64) {
	t.Helper()
	if err := st.Update(context.Background(), func(tx models.Tx) error {
		m, err := tx.GetMemory(ns, id)
		if err != nil {
			return err
		}
		m.RecentDismissals = n
		return tx.PutMemory(m)
	}); err != nil {
		t.Fatal(err)
	}
}
