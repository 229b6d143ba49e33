// Package rerank reorders a recall's best candidates with a language model through any
// OpenAI-compatible chat-completions endpoint (go-openai): by default Claude Haiku through
// Anthropic's OpenAI-compatible API. A latency gate lets a call start only when the
// request's budget allows it and bounds it by what is left; a circuit breaker stops calling
// an endpoint that keeps failing (docs/design.md#threshold-and-rerank). Whatever happens, the caller gets an
// order it can use — the model's, or its own — and a status saying which and why.
package rerank

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/salience-ai/salience/models"
)

// Statuses of an Outcome, reported in every recall response.
const (
	StatusApplied       = "applied"        // the model's order is used
	StatusSkippedBudget = "skipped_budget" // the gate saw no room in the latency budget
	StatusTimeout       = "timeout"        // the call was cut off at its deadline
	StatusError         = "error"          // the endpoint failed or its answer was unusable
	StatusCircuitOpen   = "circuit_open"   // the breaker is open after repeated failures
	StatusOff           = "off"            // off for this request or namespace, or nothing to rerank
	StatusUnconfigured  = "unconfigured"   // no reranker is configured (set by the caller)
)

// Request modes (the recall request's "rerank" field).
const (
	ModeAuto = "auto" // rerank when the namespace's policy is on and the gate allows
	ModeOn   = "on"   // as auto, but without the p95 test: the call still ends by the budget
	ModeOff  = "off"  // never
)

// Defaults of Options.
const (
	DefaultBaseURL = "https://api.anthropic.com/v1/" // Anthropic's OpenAI-compatible API
	DefaultModel   = "claude-haiku-4-5"
	DefaultTopN    = 20
	// DefaultMargin is kept back from the budget for what recall does after reranking
	// (the budget cut, recording surfacings, formatting): about 1 ms on the embedded store.
	// 10 ms skipped every turn of an 80 ms endpoint under a 100 ms budget on a loaded
	// machine (the call took 81–89 ms); 5 ms lets those turns through.
	DefaultMargin           = 5 * time.Millisecond
	DefaultFailureThreshold = 5
	DefaultCooldown         = 30 * time.Second
	DefaultWindow           = 64
	// DefaultSampleTTL is how long a call's latency counts. It is also how often the gate
	// tries again an endpoint it found too slow (once every sample has aged out, the next
	// call goes out to measure it anew): a slow endpoint costs one call a minute, each one
	// still inside its budget.
	DefaultSampleTTL  = time.Minute
	DefaultProbeEvery = time.Second
)

// Options configure a Reranker; zero values take the defaults above.
type Options struct {
	BaseURL string // API root including its version, e.g. "http://localhost:11434/v1"
	APIKey  string // sent as a bearer token; may be empty for a local server
	Model   string
	// TopN is how many of the best candidates are offered to the model; the rest keep
	// their places after them.
	TopN int
	// TextBytes clips each candidate's text in the prompt; 0 means 600.
	TextBytes int
	// Margin is kept back from the budget for the rest of the pipeline.
	Margin time.Duration
	// FailureThreshold failures in a row open the breaker for Cooldown.
	FailureThreshold int
	Cooldown         time.Duration
	// Window is how many recent call latencies the gate's p95 reads; SampleTTL is how long
	// one counts.
	Window    int
	SampleTTL time.Duration
	// ProbeEvery is how long the gate waits, while its p95 says no, before it lets one call
	// through to measure again; it doubles while probes stay too slow, up to SampleTTL.
	ProbeEvery time.Duration
	// Default is the policy of a namespace whose settings say nothing: PolicyOn or
	// PolicyOff (the default: nothing leaves the server unless someone turned it on).
	Default string
	// Settings returns namespace settings (settings.Service, which caches them); nil
	// means every namespace follows Default.
	Settings SettingsSource
	// Now is the clock of the gate and the breaker; nil means time.Now.
	Now func() time.Time
	// Logger hears when the circuit opens and closes; nil discards.
	Logger *slog.Logger
	// HTTPClient makes the calls; nil means one that keeps up to 64 idle connections to
	// the endpoint, so concurrent recalls do not pay a new TLS handshake each.
	HTTPClient *http.Client
}

func (o Options) withDefaults() Options {
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
	}
	if o.Model == "" {
		o.Model = DefaultModel
	}
	if o.TopN <= 0 {
		o.TopN = DefaultTopN
	}
	if o.TextBytes <= 0 {
		o.TextBytes = defaultTextBytes
	}
	if o.Margin <= 0 {
		o.Margin = DefaultMargin
	}
	if o.FailureThreshold <= 0 {
		o.FailureThreshold = DefaultFailureThreshold
	}
	if o.Cooldown <= 0 {
		o.Cooldown = DefaultCooldown
	}
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	if o.SampleTTL <= 0 {
		o.SampleTTL = DefaultSampleTTL
	}
	if o.ProbeEvery <= 0 {
		o.ProbeEvery = DefaultProbeEvery
	}
	if o.Default == "" {
		o.Default = PolicyOff
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.HTTPClient == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 64
		o.HTTPClient = &http.Client{Transport: t}
	}
	return o
}

// Candidate is one memory offered for reranking, in the pipeline's order.
type Candidate struct {
	ID   string
	Text string // what the bot would be shown: the memory, or its best chunk
	// Sensitive memories are never sent: they keep their places and the others are
	// reordered around them.
	Sensitive bool
}

// Request is one rerank of a recall's ranked list.
type Request struct {
	Namespace  string
	Query      string // the turn: the query and/or the latest messages
	Candidates []Candidate
	Mode       string // ModeAuto (""), ModeOn or ModeOff
	// Policy, PolicyOn or PolicyOff, replaces the namespace's policy for this request (an
	// experiment variant's rerank policy); "" follows the namespace.
	Policy  string
	Elapsed time.Duration // what the recall has spent so far
	Budget  time.Duration // the recall's latency budget
}

// Outcome says what happened. Order is the new order as indices into the request's
// Candidates (a permutation of all of them); it is set only when Status is applied.
type Outcome struct {
	Status  string
	Reason  string
	Order   []int
	Latency time.Duration // of the call to the endpoint, when one was made
}

// Reranker is safe for concurrent use.
type Reranker struct {
	client  *openai.Client
	opts    Options
	lat     *latencies
	breaker *breaker
	prober  *prober
	policy  *policy
	metrics *metrics
}

// New returns a reranker for opts. It fails on a policy that is neither on nor off; it
// makes no call.
func New(opts Options) (*Reranker, error) {
	opts = opts.withDefaults()
	if opts.Default != PolicyOn && opts.Default != PolicyOff {
		return nil, fmt.Errorf("rerank: default policy %q: want on or off", opts.Default)
	}
	oc := openai.DefaultConfig(opts.APIKey)
	oc.BaseURL = strings.TrimRight(opts.BaseURL, "/")
	oc.HTTPClient = opts.HTTPClient
	return &Reranker{
		client:  openai.NewClientWithConfig(oc),
		opts:    opts,
		lat:     newLatencies(opts.Window, opts.SampleTTL),
		breaker: newBreaker(opts.FailureThreshold, opts.Cooldown),
		prober:  newProber(opts.ProbeEvery, opts.SampleTTL),
		policy:  &policy{def: opts.Default, settings: opts.Settings},
		metrics: newMetrics(),
	}, nil
}

// Model returns the model asked.
func (r *Reranker) Model() string { return r.opts.Model }

// Rerank decides whether to call the model for req and, if it may, calls it under the
// budget's deadline. It never fails: an outcome other than applied means "keep your order".
func (r *Reranker) Rerank(ctx context.Context, req *Request) Outcome {
	out := r.rerank(ctx, req)
	r.metrics.outcomes.WithLabelValues(out.Status).Inc()
	return out
}

func (r *Reranker) rerank(ctx context.Context, req *Request) Outcome {
	a, refused := r.admit(ctx, req)
	if refused != nil {
		return *refused
	}
	return r.run(ctx, req, a)
}

// admission is a call admit let through: the candidates to send (their positions in the
// request), how long it may take, why it goes if the p95 said no, and the breaker's permit.
type admission struct {
	slots  []int
	left   time.Duration
	probe  string
	permit permit
}

// admit applies, in order, the request's mode, the namespace's policy, the candidates
// there are to send, the breaker and the latency gate (with its probes). It returns the
// outcome of a refusal, or nil and the admission.
func (r *Reranker) admit(ctx context.Context, req *Request) (admission, *Outcome) {
	refuse := func(status, reason string) (admission, *Outcome) {
		return admission{}, &Outcome{Status: status, Reason: reason}
	}
	if req.Mode == ModeOff {
		return refuse(StatusOff, "rerank off in request")
	}
	now := r.opts.Now()
	switch req.Policy {
	case PolicyOn:
	case PolicyOff:
		return refuse(StatusOff, "rerank off in the experiment variant")
	default:
		if on, why := r.policy.resolve(ctx, req.Namespace); !on {
			return refuse(StatusOff, why)
		}
	}
	window := min(len(req.Candidates), r.opts.TopN)
	slots := make([]int, 0, window) // positions of the candidates that may be sent
	for i, c := range req.Candidates[:window] {
		if !c.Sensitive {
			slots = append(slots, i)
		}
	}
	if len(slots) < 2 {
		return refuse(StatusOff, "fewer than 2 candidates to rerank")
	}
	// An open breaker answers first: it explains more than the budget would.
	if r.breaker.state(now) == stateOpen {
		_, _, why := r.breaker.acquire(now)
		return refuse(StatusCircuitOpen, why)
	}
	p95, _ := r.lat.p95(now)
	left, why := gate(req.Elapsed, p95, r.opts.Margin, req.Budget, req.Mode == ModeOn)
	probe := ""
	if why != "" {
		// The p95 said no; if there is time at all and no call went out for a while,
		// this one goes anyway, to measure again.
		raw, noTime := gate(req.Elapsed, 0, r.opts.Margin, req.Budget, true)
		if noTime != "" {
			return refuse(StatusSkippedBudget, why)
		}
		ok, every := r.prober.due(now)
		if !ok {
			return refuse(StatusSkippedBudget, why)
		}
		left = raw
		probe = fmt.Sprintf("a probe past the p95 (%s > %s left): one call per %s goes to measure again", ms(p95), ms(raw), every)
	}
	permit, ok, why := r.breaker.acquire(now)
	if !ok {
		return refuse(StatusCircuitOpen, why)
	}
	r.prober.sent(now)
	return admission{slots: slots, left: left, probe: probe, permit: permit}, nil
}

// run makes an admitted call under its deadline and records what it taught: a latency
// sample, the breaker's verdict, the probe's result, the metrics.
func (r *Reranker) run(ctx context.Context, req *Request, a admission) Outcome {
	slots, left := a.slots, a.left
	texts := make([]string, len(slots))
	for k, i := range slots {
		texts[k] = req.Candidates[i].Text
	}
	cctx, cancel := context.WithTimeout(ctx, left)
	defer cancel()
	start := r.opts.Now()
	ranking, err := r.call(cctx, req.Query, texts)
	end := r.opts.Now()
	took := end.Sub(start)
	timedOut := err != nil && ctx.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || cctx.Err() != nil)
	if timedOut {
		// A call cut off at its deadline would have taken at least what it was allowed.
		r.lat.add(end, max(took, left))
	} else {
		r.lat.add(end, took)
	}

	out := Outcome{Latency: took}
	result := callFailed
	switch {
	case err == nil:
		out.Status, result = StatusApplied, callOK
		out.Order = merge(len(req.Candidates), slots, ranking)
	case ctx.Err() != nil: // the caller gave up; that says nothing about the endpoint
		out.Status, out.Reason, result = StatusError, "request canceled", callNeutral
	case timedOut:
		// Slow, not broken: the latency sample above keeps the gate from trying again
		// while calls take this long; the breaker is left to errors.
		out.Status, out.Reason, result = StatusTimeout, fmt.Sprintf("no answer within the %s left of the budget", ms(left)), callNeutral
	default:
		out.Status, out.Reason = StatusError, models.Clip(err.Error(), 300)
	}
	switch opened, closed := r.breaker.done(end, a.permit, result); {
	case opened:
		r.opts.Logger.Warn("rerank: circuit open: no calls for the cool-down", "failures", r.opts.FailureThreshold,
			"cooldown", r.opts.Cooldown.String(), "last_error", out.Reason)
	case closed:
		r.opts.Logger.Info("rerank: circuit closed: the endpoint answers again")
	}
	if a.probe != "" {
		r.prober.result(out.Status == StatusApplied)
		if out.Reason == "" {
			out.Reason = a.probe
		} else {
			out.Reason = a.probe + "; " + out.Reason
		}
	}
	r.metrics.latency.WithLabelValues(out.Status).Observe(took.Seconds())
	return out
}

// call asks the model to rank texts and returns their indices in its order.
func (r *Reranker) call(ctx context.Context, query string, texts []string) ([]int, error) {
	resp, err := r.client.CreateChatCompletion(ctx, openai.ChatCompletionRequest{
		Model: r.opts.Model,
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: systemPrompt},
			{Role: openai.ChatMessageRoleUser, Content: userPrompt(query, texts, r.opts.TextBytes)},
		},
		MaxTokens: maxAnswerTokens(len(texts)),
	})
	if err != nil {
		return nil, err
	}
	if len(resp.Choices) == 0 {
		return nil, fmt.Errorf("%w: no choices", errAnswer)
	}
	return parseRanking(resp.Choices[0].Message.Content, len(texts))
}

// merge builds the full order of n candidates: the sent ones (at slots, in the pipeline's
// order) take those same slots in the model's order (ranking indexes slots); every other
// candidate — sensitive ones, and those beyond the top N — keeps its own place.
func merge(n int, slots, ranking []int) []int {
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	for k, r := range ranking {
		order[slots[k]] = slots[r]
	}
	return order
}

// P95 returns the gate's current estimate of a call's duration and how many recent calls
// it rests on.
func (r *Reranker) P95() (time.Duration, int) { return r.lat.p95(r.opts.Now()) }
