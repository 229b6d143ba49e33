package client

import (
	"context"
	"crypto/rand"
	"errors"
	"net/url"
	"strconv"
	"time"

	"github.com/salience-ai/salience/api"
)

// Recall modes (api.RecallRequest.Mode).
const (
	ModeAmbient = "ambient" // before each reply: what is worth having in mind, volunteered memories included
	ModeSearch  = "search"  // a deliberate look-up
	ModeStartup = "startup" // at the start of a conversation: anchors, important facts, crystals, summaries, recent turns
)

// Roles of a memory's source (api.Source.Role): whose words it holds. Store a bot's own
// replies with RoleAssistant, so recall never takes them as evidence for a question they
// only repeat; absent is unknown, taken as the user's.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Engagement event types (api.EngagementEvent.Type).
const (
	EventUsed      = "used"
	EventHelpful   = "helpful"
	EventIgnored   = "ignored"
	EventDismissed = "dismissed"
)

// Namespace is one namespace of the server: a bot's memories. Get one with
// Client.Namespace; it is safe for concurrent use.
type Namespace struct {
	c  *Client
	ns string
}

// Namespace returns the calls of namespace ns (1–64 letters, digits, '_', '-' or '.'; the
// server rejects other names with CodeInvalid naming "namespace").
func (c *Client) Namespace(ns string) *Namespace { return &Namespace{c: c, ns: ns} }

// Name returns the namespace's name.
func (n *Namespace) Name() string { return n.ns }

// Client returns the client the namespace belongs to: the same server and key, for the
// other namespaces the key is granted (a shared one, say).
func (n *Namespace) Client() *Client { return n.c }

// Store stores one memory and returns it as created (id, defaults, concepts). It is not
// retried: a repeat would store it twice.
func (n *Namespace) Store(ctx context.Context, m api.MemoryInput) (*api.Memory, error) {
	var out api.CreateMemoriesResponse
	if err := n.c.do(ctx, call{route: routeCreate, params: []string{n.ns}, body: m}, &out); err != nil {
		return nil, err
	}
	if len(out.Memories) != 1 {
		return nil, errors.New("client: the server created " + strconv.Itoa(len(out.Memories)) + " memories for one")
	}
	return &out.Memories[0], nil
}

// StoreBatch stores 1 to 1,000 memories, all or none, and returns them in order. An invalid
// item fails the whole batch with CodeInvalid naming it ("memories[3].content").
func (n *Namespace) StoreBatch(ctx context.Context, ms []api.MemoryInput) ([]api.Memory, error) {
	var out api.CreateMemoriesResponse
	if err := n.c.do(ctx, call{route: routeCreate, params: []string{n.ns}, body: api.CreateMemoriesRequest{Memories: ms}}, &out); err != nil {
		return nil, err
	}
	return out.Memories, nil
}

// Recall answers a recall request in any mode (ModeAmbient by default, ModeSearch,
// ModeStartup). Each result carries the surfacing id to report engagement with. It is not
// retried: each call records a turn and its surfacings.
func (n *Namespace) Recall(ctx context.Context, req api.RecallRequest) (*api.RecallResponse, error) {
	var out api.RecallResponse
	if err := n.c.do(ctx, call{route: routeRecall, params: []string{n.ns}, body: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Predict asks which memories the conversation's next turns are likely to want, before
// anyone asks (proactive prediction): at most 3, each through the four gates, with its
// surfacing id for engagement reports. Not retried: surfaced predictions are recorded.
func (n *Namespace) Predict(ctx context.Context, req api.PredictRequest) (*api.PredictResponse, error) {
	var out api.PredictResponse
	if err := n.c.do(ctx, call{route: routePredict, params: []string{n.ns}, body: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Get returns one whole memory. The id of one of its chunks (a recall result's
// Fragment.ParentID, or the chunk's own id) returns the parent: a fragment hydrated.
func (n *Namespace) Get(ctx context.Context, id string) (*api.Memory, error) {
	var out api.Memory
	if err := n.c.do(ctx, call{route: routeGet, params: []string{n.ns, id}, idempotent: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListOptions filter and page a listing; zero values mean no filter and the server's
// defaults (limit 100, offset 0).
type ListOptions struct {
	Kinds          []string
	ConversationID string
	// Since ≤ created_at < Until.
	Since, Until  time.Time
	Limit, Offset int
}

func (o ListOptions) query() url.Values {
	q := url.Values{}
	for _, k := range o.Kinds {
		q.Add("kind", k)
	}
	if o.ConversationID != "" {
		q.Set("conversation_id", o.ConversationID)
	}
	timeParam(q, "since", o.Since)
	timeParam(q, "until", o.Until)
	if o.Limit != 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.Offset != 0 {
		q.Set("offset", strconv.Itoa(o.Offset))
	}
	return q
}

func timeParam(q url.Values, key string, t time.Time) {
	if !t.IsZero() {
		q.Set(key, t.UTC().Format(time.RFC3339Nano))
	}
}

// List returns a page of memories, newest first, and the total that match.
func (n *Namespace) List(ctx context.Context, o ListOptions) (*api.ListMemoriesResponse, error) {
	var out api.ListMemoriesResponse
	if err := n.c.do(ctx, call{route: routeList, params: []string{n.ns}, query: o.query(), idempotent: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Delete deletes a memory with its chunks, vectors and edges (a chunk's id deletes its
// parent). A retry that finds the memory already gone, after an attempt whose outcome was
// unknown, counts as done.
func (n *Namespace) Delete(ctx context.Context, id string) error {
	return n.c.do(ctx, call{route: routeDelete, params: []string{n.ns, id}, idempotent: true}, nil)
}

// Edit changes a memory's importance, validity or sensitivity (a JSON merge patch: fields
// left nil stay; those named in p.Clear return to their default) and returns the memory as
// stored. Setting InvalidAt retires a fact that stopped being true. A chunk's id edits its
// memory. It is retried: the same patch applied twice gives what it gave once.
func (n *Namespace) Edit(ctx context.Context, id string, p api.MemoryPatch) (*api.Memory, error) {
	var out api.Memory
	if err := n.c.do(ctx, call{route: routeEdit, params: []string{n.ns, id}, body: p, idempotent: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Report reports engagement: what the bot did with surfaced memories (at most 1,000
// events). An event without an ID gets a random one before the first attempt, so a retry
// repeats the same ids and the server applies each event once. Events the server rejects
// (an unknown surfacing, a bad type) are not an error: they come back in the response with
// Status "rejected" and their error; Rejected counts them.
func (n *Namespace) Report(ctx context.Context, events ...api.EngagementEvent) (*api.EngagementResponse, error) {
	evs := make([]api.EngagementEvent, len(events))
	copy(evs, events)
	for i := range evs {
		if evs[i].ID == "" {
			evs[i].ID = "ev-" + rand.Text()
		}
	}
	var out api.EngagementResponse
	if err := n.c.do(ctx, call{route: routeEngagement, params: []string{n.ns}, body: api.EngagementRequest{Events: evs}, idempotent: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Metrics returns the namespace's engagement metrics over the surfacings and events in
// [since, until); zero times leave that side open.
func (n *Namespace) Metrics(ctx context.Context, since, until time.Time) (*api.MetricsResponse, error) {
	q := url.Values{}
	timeParam(q, "since", since)
	timeParam(q, "until", until)
	var out api.MetricsResponse
	if err := n.c.do(ctx, call{route: routeMetrics, params: []string{n.ns}, query: q, idempotent: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Resurfacing returns the resurfacing queue, highest value first: memories the decay scan
// found due to come back. limit is 1..1000; 0 means the server's default (100).
func (n *Namespace) Resurfacing(ctx context.Context, limit int) ([]api.ResurfaceItem, error) {
	var out api.ResurfacingResponse
	if err := n.c.do(ctx, call{route: routeResurfacing, params: []string{n.ns}, query: limitQuery(limit), idempotent: true}, &out); err != nil {
		return nil, err
	}
	return out.Items, nil
}

// Thresholds returns the threshold bandit's posterior per conversation type.
func (n *Namespace) Thresholds(ctx context.Context) (*api.ThresholdsResponse, error) {
	var out api.ThresholdsResponse
	if err := n.c.do(ctx, call{route: routeThresholds, params: []string{n.ns}, idempotent: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func limitQuery(limit int) url.Values {
	if limit == 0 {
		return nil
	}
	return url.Values{"limit": {strconv.Itoa(limit)}}
}
