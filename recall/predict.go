package recall

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/salience-ai/salience/ids"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/predict"
)

// Proactive prediction online (docs/design.md#prediction-and-thresholds): the memories the conversation's next topics lead
// to, before anyone asks. The topic-transition model and the usage patterns are rebuilt from
// the stored turn log (each ambient turn's decision keeps its concepts; used and helpful
// surfacings say which memory a turn used), so they are a pure function of the store: they
// survive a restart, and servers sharing a store build the same ones. A namespace's models
// are built only when a prediction is asked for, and kept for PredictTTL.

// Proactive prediction defaults.
const (
	// DefaultPredictTTL is how long a namespace's prediction models are used before they are
	// rebuilt from the turn log.
	DefaultPredictTTL = 30 * time.Second
	// DefaultPredictTurns is how many of a namespace's latest ambient turns the models learn from.
	DefaultPredictTurns = 20000
	// predictTopics bounds the predicted topics whose memories are judged, best first.
	predictTopics = 8
	// predictCandidates bounds the memories judged per call.
	predictCandidates = 64
	// predictUseScan is how many surfacings per turn of the log are read for its uses.
	predictUseScan = 10
	// maxPredictNamespaces bounds the model cache; past it the cache starts over.
	maxPredictNamespaces = 4096
)

// PredictRequest is one call of POST /v1/namespaces/{ns}/predict: which memories the
// conversation's next turns are likely to want. It does not move the conversation.
type PredictRequest struct {
	Namespace      string
	ConversationID string // required
	// TurnID is the turn the surfaced predictions are recorded under (engagement reports
	// point at their surfacings); one is assigned when empty.
	TurnID string
	// Messages are the latest messages, optional: their concepts (with Entities) are the
	// current turn. Without them, the conversation's last recorded turn is.
	Messages         []Message
	Entities         []string
	ConversationType string // "" = inferred from the messages, else the conversation's
	Explain          bool
	Now              time.Time // the caller's clock; zero = time.Now()
}

// Prediction is the verdict on one proactive candidate: the memory, predict's judgement
// (confidence, topic, trigger matches, lead, the gate that stopped it), and, when surfaced,
// its surfacing id and why it passed.
type Prediction struct {
	predict.Prediction
	Memory      *models.Memory
	SurfacingID string
	Reason      string // why it passed every gate; "" when blocked
}

// Proactive is what proactive surfacing found for a turn.
type Proactive struct {
	Predictions []Prediction    // surfaced, best first, at most predict.MaxProactive
	Judged      []Prediction    // only with Explain: every candidate judged, surfaced first
	Topics      []predict.Topic // the predicted topics, best first
	Momentum    float64         // messages per minute over the last 5 minutes
	Threshold   float64         // gate 1's threshold on the prediction confidence
}

// PredictResponse is the answer to a PredictRequest.
type PredictResponse struct {
	Proactive
	TurnID           string
	ConversationType string
	Policy           string // the threshold policy in force
	Variant          string
	Experiment       string
	SettingsVersion  int
	Degraded         []string
}

// normalizePredict validates req and fills its defaults. Errors name the JSON field.
func normalizePredict(req *PredictRequest, now time.Time) error {
	if err := models.ValidateNamespace(req.Namespace); err != nil {
		return err
	}
	if strings.TrimSpace(req.ConversationID) == "" {
		return models.Invalid("conversation_id", "conversation_id is required: predictions follow a conversation")
	}
	if err := checkTurn(req.ConversationID, req.TurnID, req.Messages, req.Entities); err != nil {
		return err
	}
	if req.Now.IsZero() {
		req.Now = now
	}
	return nil
}

// Predict judges the memories the conversation's predicted topics lead to through the four
// gates and records the surfaced ones (mode predict) under the request's turn. The
// conversation's state does not move and no threshold decision is made: gate 1 reads the
// threshold in force for the conversation type (predict.Bandit.Current).
func (p *Pipeline) Predict(ctx context.Context, req *PredictRequest) (*PredictResponse, error) {
	if err := normalizePredict(req, p.opts.Now()); err != nil {
		return nil, err
	}
	rq := &Request{Namespace: req.Namespace, ConversationID: req.ConversationID, TurnID: req.TurnID, Mode: models.ModeAmbient,
		Messages: req.Messages, Entities: req.Entities, ConversationType: req.ConversationType, Rerank: "auto",
		Explain: req.Explain, Now: req.Now}
	p, version, unread := p.forNamespace(ctx, req.Namespace)
	p, noExperiment, err := p.forExperiment(ctx, rq)
	if err != nil {
		return nil, err
	}
	in := p.intake(ctx, rq)
	st, err := p.conversation(ctx, rq)
	if err != nil {
		return nil, err
	}
	if in.model, err = p.model(ctx, req.Namespace); err != nil {
		return nil, err
	}
	current := hasMessage(req.Messages) || len(in.concepts) > 0
	if req.ConversationType == "" && !hasMessage(req.Messages) {
		in.convType = st.Type
		if in.convType == "" {
			in.convType = models.ConvOther
		}
	}
	recent := cloneTurns(st.RecentTurns)
	if current {
		recent = append(recent, in.concepts)
	}
	times := slices.Clone(st.MessageTimes)
	for _, m := range req.Messages {
		if !m.At.IsZero() && !slices.ContainsFunc(times, m.At.Equal) {
			times = append(times, m.At)
		}
	}
	pol, threshold, err := p.currentThreshold(ctx, rq, in.convType)
	if err != nil {
		return nil, err
	}
	resp := &PredictResponse{TurnID: in.turnID, ConversationType: in.convType, Policy: pol, SettingsVersion: version}
	resp.Experiment, resp.Variant = p.variant()
	pr, err := p.proactive(ctx, rq, in, recent, times, skipped(st, nil), threshold)
	if err != nil {
		return nil, err
	}
	ss := p.predictSurfacings(rq, in, pr, threshold, resp.Variant, resp.Experiment, version)
	if len(ss) > 0 {
		if err := p.store.RecordSurfacings(ctx, ss, nil); err != nil {
			return nil, err
		}
	}
	resp.Proactive = *pr
	for _, why := range []string{unread, noExperiment} {
		if why != "" {
			resp.Degraded = append(resp.Degraded, why)
		}
	}
	return resp, nil
}

// currentThreshold is the threshold in force for a conversation type under the request's
// policy, read without a Thompson draw and without recording a decision.
func (p *Pipeline) currentThreshold(ctx context.Context, req *Request, convType string) (string, float64, error) {
	pol, err := p.policy(ctx, req)
	if err != nil {
		return "", 0, err
	}
	post := &predict.Posteriors{}
	if pol.Name == predict.PolicyBandit {
		raw, err := p.store.GetState(ctx, predict.StateKey(req.Namespace))
		if err != nil {
			return "", 0, err
		}
		if post, err = predict.DecodePosteriors(raw); err != nil {
			post = &predict.Posteriors{} // as decide does: an unreadable state is the prior
		}
	}
	_, variant := p.variant()
	return pol.Name, p.thresholds.bandit.Current(pol, post, convType, variant), nil
}

// skipped are the memories proactive surfacing leaves out: those the conversation surfaced
// in its recent turns and those this turn shows already.
func skipped(st *models.ConversationState, results []Result) map[string]bool {
	skip := map[string]bool{}
	if st != nil {
		for _, turn := range st.RecentSurfaced {
			for _, id := range turn {
				skip[id] = true
			}
		}
	}
	for _, r := range results {
		skip[r.Memory.ID] = true
	}
	return skip
}

// proactive judges the memories the predicted topics lead to. recent are the concept sets
// of the conversation's latest turns, oldest first (the last is the current turn), times
// its message times for momentum.
func (p *Pipeline) proactive(ctx context.Context, req *Request, in *intake, recent [][]string, times []time.Time,
	skip map[string]bool, threshold float64) (*Proactive, error) {
	out := &Proactive{Momentum: predict.Momentum(times, req.Now), Threshold: threshold, Topics: []predict.Topic{}}
	if len(recent) == 0 || len(recent[len(recent)-1]) == 0 {
		return out, nil
	}
	tr, us, err := p.predictModels(ctx, req.Namespace, req.Now)
	if err != nil {
		return nil, err
	}
	out.Topics = tr.Predict(recent[len(recent)-1], predictTopics)
	cands, mems, err := p.proactiveCandidates(ctx, req.Namespace, out.Topics, skip, req.Now)
	if err != nil {
		return nil, err
	}
	for _, v := range predict.Proactive(tr, us, recent, cands, out.Momentum, threshold) {
		pr := Prediction{Prediction: v, Memory: mems[v.MemoryID]}
		if v.Surfaced {
			pr.Reason = passed(v, threshold, out.Momentum, pr.Memory.RecentDismissals)
			out.Predictions = append(out.Predictions, pr)
		}
		if req.Explain {
			out.Judged = append(out.Judged, pr)
		}
	}
	return out, nil
}

// passed says why a surfaced prediction passed each gate.
func passed(v predict.Prediction, threshold, momentum, dismissals float64) string {
	return fmt.Sprintf("topic %q is predicted after %q with confidence %.2f ≥ threshold %.2f; %d trigger matches (%s) ≥ %d; momentum %.1f ≤ %g messages/min; recent dismissals %.1f ≤ %g; not in a dismissal cooldown",
		v.Topic, v.From, v.Confidence, threshold, len(v.Matches), strings.Join(v.Matches, ", "), predict.MinTriggerMatches,
		momentum, predict.MaxMomentum, dismissals, predict.MaxRecentDismissals)
}

// proactiveTypes are the edges that tie a memory to a concept it is about.
var proactiveTypes = []models.EdgeType{models.EdgeMentions, models.EdgeTrigger, models.EdgeDomain}

// proactiveCandidates are the memories tied to the predicted topics (mentions, trigger and
// domain edges), the best topic's first, at most predictCandidates, leaving out skipped
// memories, sensitive ones (as ambient recall does) and facts no longer true; each with the topics it is tied to, its own triggers
// and its dismissal state.
func (p *Pipeline) proactiveCandidates(ctx context.Context, ns string, topics []predict.Topic, skip map[string]bool,
	now time.Time) ([]predict.Candidate, map[string]*models.Memory, error) {
	if len(topics) == 0 {
		return nil, nil, nil
	}
	best := make(map[string]float64, len(topics))
	nodes := make([]string, len(topics))
	for i, t := range topics {
		best[t.Concept] = t.P
		nodes[i] = models.ConceptID(t.Concept)
	}
	edges, err := p.store.StrongestNeighbors(ctx, ns, nodes, p.opts.ConceptFanout, proactiveTypes)
	if err != nil {
		return nil, nil, err
	}
	linked := map[string][]string{}
	score := map[string]float64{}
	var order []string
	for _, e := range edges {
		mem, concept := e.From, e.To
		if models.IsConceptID(mem) {
			mem, concept = concept, mem
		}
		if models.IsConceptID(mem) || !models.IsConceptID(concept) {
			continue
		}
		if parent, isChunk := ids.Parent(mem); isChunk {
			mem = parent
		}
		name := strings.TrimPrefix(concept, models.ConceptPrefix)
		pr, ok := best[name]
		if !ok || skip[mem] {
			continue
		}
		if _, seen := linked[mem]; !seen {
			order = append(order, mem)
		}
		if !slices.Contains(linked[mem], name) {
			linked[mem] = append(linked[mem], name)
		}
		score[mem] = max(score[mem], pr)
	}
	sort.Slice(order, func(i, j int) bool {
		if score[order[i]] != score[order[j]] {
			return score[order[i]] > score[order[j]]
		}
		return order[i] < order[j]
	})
	if len(order) > predictCandidates {
		order = order[:predictCandidates]
	}
	ms, err := p.store.GetMemories(ctx, ns, order)
	if err != nil {
		return nil, nil, err
	}
	cands := make([]predict.Candidate, 0, len(ms))
	mems := make(map[string]*models.Memory, len(ms))
	for _, m := range ms {
		if m.IsChunk() || m.Sensitive || !m.ValidNow(now) {
			continue
		}
		trig := make([]string, 0, len(m.Triggers))
		for _, t := range m.Triggers {
			if n := models.NormalizeConcept(t); n != "" && !slices.Contains(trig, n) {
				trig = append(trig, n)
			}
		}
		mems[m.ID] = m
		cands = append(cands, predict.Candidate{ID: m.ID, Concepts: linked[m.ID], Triggers: trig,
			RecentDismissals: m.RecentDismissals, InCooldown: m.Schedule.CooldownTo.After(now)})
	}
	return cands, mems, nil
}

// predictSurfacings are the records of the surfaced predictions of a turn (mode predict):
// engagement is reported on them, and a used one teaches the usage patterns.
func (p *Pipeline) predictSurfacings(req *Request, in *intake, pr *Proactive, threshold float64, variant, experimentID string,
	version int) []*models.Surfacing {
	now := req.Now.UTC()
	ss := make([]*models.Surfacing, 0, len(pr.Predictions))
	for i := range pr.Predictions {
		v := &pr.Predictions[i]
		m := v.Memory
		s := &models.Surfacing{
			ID: ids.New(now), Namespace: req.Namespace, ConversationID: req.ConversationID, TurnID: in.turnID,
			MemoryID: m.ID, Mode: models.ModePredict, Rank: i + 1, Score: v.Confidence, ConvType: in.convType,
			Threshold: threshold, ArmProb: 1, Variant: variant, Experiment: experimentID, Concepts: in.concepts,
			Terms: in.learnable, PUse: v.Confidence, SettingsVersion: version, At: now,
			// What the relevance model may learn from a predicted memory: its own record. It
			// was not matched to the turn's words, so the match features stay 0.
			Components: models.Components{Confidence: m.Confidence, Importance: m.Importance, Used: float64(m.UsageCount),
				Turn: turnFeature(m)},
		}
		if in.model != nil {
			s.ModelVersion = in.model.N
		}
		v.SurfacingID = s.ID
		ss = append(ss, s)
	}
	return ss
}

func turnFeature(m *models.Memory) float64 {
	if m.Kind == models.KindTurn {
		return 1
	}
	return 0
}

func cloneTurns(ts [][]string) [][]string {
	out := make([][]string, 0, len(ts)+1)
	for _, t := range ts {
		out = append(out, slices.Clone(t))
	}
	return out
}

// predictCache holds each namespace's prediction models, rebuilt after PredictTTL. It is
// shared by the copies of a pipeline (forNamespace, forExperiment).
type predictCache struct {
	mu sync.Mutex
	ns map[string]*nsPredict
}

type nsPredict struct {
	mu    sync.Mutex // held while building: one build per namespace at a time
	tr    *predict.Transitions
	us    *predict.Usage
	built time.Time
}

// Forget drops ns's cached prediction models, as the namespace was deleted: a namespace
// created again under its name builds its own from its first prediction on.
func (p *Pipeline) Forget(ns string) {
	c := p.predictions
	c.mu.Lock()
	delete(c.ns, ns)
	c.mu.Unlock()
}

// predictModels returns ns's models, built from its turn log when missing or older than
// PredictTTL (a negative TTL builds them on every call). They are read-only once built.
func (p *Pipeline) predictModels(ctx context.Context, ns string, now time.Time) (*predict.Transitions, *predict.Usage, error) {
	c := p.predictions
	c.mu.Lock()
	if c.ns == nil || len(c.ns) >= maxPredictNamespaces {
		c.ns = map[string]*nsPredict{}
	}
	m := c.ns[ns]
	if m == nil {
		m = &nsPredict{}
		c.ns[ns] = m
	}
	c.mu.Unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	if ttl := p.opts.PredictTTL; m.tr != nil && ttl > 0 && !now.Before(m.built) && now.Sub(m.built) < ttl {
		return m.tr, m.us, nil
	}
	tr, us, err := p.buildPredictModels(ctx, ns)
	if err != nil {
		return nil, nil, err
	}
	m.tr, m.us, m.built = tr, us, now
	return tr, us, nil
}

// buildPredictModels learns ns's models from its latest PredictTurns ambient turns and the
// uses (used or helpful outcomes) of the surfacings of that span.
func (p *Pipeline) buildPredictModels(ctx context.Context, ns string) (*predict.Transitions, *predict.Usage, error) {
	ds, err := p.store.FindDecisions(ctx, models.DecisionFilter{Namespace: ns, Desc: true, Limit: p.opts.PredictTurns})
	if err != nil {
		return nil, nil, err
	}
	if len(ds) == 0 {
		tr, us := predict.Build(nil, nil)
		return tr, us, nil
	}
	turns := make([]predict.Turn, len(ds))
	for i, d := range ds {
		turns[i] = predict.Turn{ConversationID: d.ConversationID, TurnID: d.TurnID, At: d.At, Concepts: d.Concepts}
	}
	ss, err := p.store.FindSurfacings(ctx, models.SurfacingFilter{Namespace: ns, Since: ds[len(ds)-1].At, Desc: true,
		Limit: predictUseScan * p.opts.PredictTurns, Brief: true})
	if err != nil {
		return nil, nil, err
	}
	var uses []predict.Use
	for _, s := range ss {
		if s.Outcome.Positive() {
			uses = append(uses, predict.Use{MemoryID: s.MemoryID, ConversationID: s.ConversationID, TurnID: s.TurnID})
		}
	}
	tr, us := predict.Build(turns, uses)
	return tr, us, nil
}
