package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/client"
)

// The tool names.
const (
	ToolAmbientRecall    = "ambient_recall"
	ToolSearchMemories   = "search_memories"
	ToolReadFullMemory   = "read_full_memory"
	ToolRemember         = "remember"
	ToolReportEngagement = "report_engagement"
	ToolExperimentReport = "experiment_report"
	ToolPredictMemories  = "predict_memories"
	ToolUpdateMemory     = "update_memory"
)

// memoryKind and eventType are strings with a closed set of values; their schemas list
// them, so a model sees the choices and a wrong one is refused before any call. resultLimit
// is bounded the same way: a written 0 is refused as the API refuses it, where the Go
// client would have dropped it and asked for the default.
type (
	memoryKind  string
	memoryRole  string
	eventType   string
	resultLimit int
)

var schemaTypes = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[memoryKind]():  {Type: "string", Enum: []any{"fact", "insight", "summary", "anchor", "crystal", "turn", "document"}},
	reflect.TypeFor[memoryRole]():  {Type: "string", Enum: []any{client.RoleUser, client.RoleAssistant}},
	reflect.TypeFor[eventType]():   {Type: "string", Enum: []any{client.EventUsed, client.EventHelpful, client.EventIgnored, client.EventDismissed}},
	reflect.TypeFor[resultLimit](): {Type: "integer", Minimum: ptr(1.0), Maximum: ptr(100.0)},
}

// inputSchema infers a tool's input schema from its Go type, with the enums above.
func inputSchema[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: schemaTypes})
	if err != nil {
		panic(fmt.Sprintf("mcp: the input schema of %T: %v", *new(T), err)) // a programming error, caught by every test
	}
	return s
}

func ptr[T any](v T) *T { return &v }

// Inputs.

type message struct {
	Speaker string `json:"speaker,omitempty" jsonschema:"who said it: user, assistant, or a name"`
	Content string `json:"content" jsonschema:"what was said"`
}

type ambientRecallInput struct {
	Message        string    `json:"message,omitempty" jsonschema:"the user's latest message, verbatim. Leave it out at the very start of a conversation to get the startup briefing instead"`
	RecentMessages []message `json:"recent_messages,omitempty" jsonschema:"the last few messages before it, oldest first (optional; they help recall follow the thread)"`
	ConversationID string    `json:"conversation_id,omitempty" jsonschema:"a stable id for this conversation, the same on every call of it: recall then avoids repeating itself and ties engagement to the right turn"`
	TokenBudget    int       `json:"token_budget,omitempty" jsonschema:"at most about this many tokens of memories (optional; 0 = no cap)"`
	Namespaces     []string  `json:"namespaces,omitempty" jsonschema:"more namespaces to recall from besides this one, read-only, such as a shared one (optional; your key must be granted each). Not used by the startup briefing, which is this namespace's own"`
}

type searchMemoriesInput struct {
	Query          string       `json:"query" jsonschema:"what to look for, in words; names and distinctive terms work best"`
	Kinds          []memoryKind `json:"kinds,omitempty" jsonschema:"only memories of these kinds (optional)"`
	Since          string       `json:"since,omitempty" jsonschema:"only memories about things at or after this time, RFC 3339 such as 2026-05-01T00:00:00Z (optional)"`
	Until          string       `json:"until,omitempty" jsonschema:"only memories about things before this time, RFC 3339 (optional)"`
	Limit          resultLimit  `json:"limit,omitempty" jsonschema:"how many results, 1 to 100 (optional; default 10)"`
	ConversationID string       `json:"conversation_id,omitempty" jsonschema:"the conversation's id, as given to ambient_recall (optional)"`
	Namespaces     []string     `json:"namespaces,omitempty" jsonschema:"more namespaces to search besides this one, read-only, such as a shared one (optional; your key must be granted each)"`
}

type readFullMemoryInput struct {
	ID        string `json:"id" jsonschema:"the memory_id of a result (for a fragment, the memory_id shown with it; the id in [Fragment i/n of ID] works too)"`
	Namespace string `json:"namespace,omitempty" jsonschema:"the namespace shown with the result, when it is another than this one (a shared namespace named in namespaces)"`
}

type updateMemoryInput struct {
	ID        string `json:"id" jsonschema:"the memory_id of the memory to change"`
	Namespace string `json:"namespace,omitempty" jsonschema:"the namespace shown with the memory, when it is another than this one"`
	// NoLongerTrue retires the memory; Importance and Sensitive reweigh it.
	NoLongerTrueSince string   `json:"no_longer_true_since,omitempty" jsonschema:"when the memory stopped being true: an RFC 3339 time such as 2026-05-01T00:00:00Z, or now; it is then no longer recalled"`
	StillTrue         bool     `json:"still_true,omitempty" jsonschema:"true to undo no_longer_true_since: the memory holds again"`
	Importance        *float64 `json:"importance,omitempty" jsonschema:"how much the memory matters, 0 to 1"`
	Sensitive         *bool    `json:"sensitive,omitempty" jsonschema:"true: never volunteered in ambient recall, only found by an explicit search"`
}

type rememberInput struct {
	Content        string     `json:"content" jsonschema:"the memory, self-contained: it will be read later without this conversation, so name people and things instead of saying he, it or this"`
	Kind           memoryKind `json:"kind,omitempty" jsonschema:"fact (default): something true about the world or the user; insight: a conclusion or lesson; summary: what a conversation covered; anchor: something to always keep in mind; turn: a message worth keeping verbatim"`
	Importance     float64    `json:"importance,omitempty" jsonschema:"0 to 1, how much it matters (optional; default 0.5)"`
	Concepts       []string   `json:"concepts,omitempty" jsonschema:"a few key concepts or names it is about (optional; extracted from the content when left out)"`
	ConversationID string     `json:"conversation_id,omitempty" jsonschema:"the conversation it comes from (optional)"`
	Speaker        string     `json:"speaker,omitempty" jsonschema:"who said or stated it (optional)"`
	Role           memoryRole `json:"role,omitempty" jsonschema:"whose words: user (default) for what the user said or what is true of the user and the world; assistant for what you yourself said or concluded — recall never takes your own words as evidence for a question they only repeat"`
	ValidAt        string     `json:"valid_at,omitempty" jsonschema:"when it became true, RFC 3339 (optional; default now)"`
	Sensitive      bool       `json:"sensitive,omitempty" jsonschema:"true for private matters: found by search_memories but never volunteered by ambient_recall"`
}

type engagementInput struct {
	SurfacingID    string    `json:"surfacing_id,omitempty" jsonschema:"the surfacing_id shown with the memory by ambient_recall or search_memories"`
	Type           eventType `json:"type" jsonschema:"used: it shaped your answer; helpful: it was useful background; ignored: it did not matter here; dismissed: it was wrong, stale or unwelcome"`
	MemoryID       string    `json:"memory_id,omitempty" jsonschema:"instead of surfacing_id: the memory's id, with conversation_id"`
	ConversationID string    `json:"conversation_id,omitempty" jsonschema:"with memory_id: the conversation it was shown in"`
	Namespace      string    `json:"namespace,omitempty" jsonschema:"the namespace shown with the memory, when it is another than this one (a shared namespace named in namespaces): the report goes where the memory lives"`
}

type reportEngagementInput struct {
	Events []engagementInput `json:"events" jsonschema:"one entry per memory you were shown and judged"`
}

// Outputs (the structured content; the text content says the same for the model).

type shownMemory struct {
	MemoryID    string    `json:"memory_id"`
	Namespace   string    `json:"namespace,omitempty" jsonschema:"the namespace the memory lives in"`
	SurfacingID string    `json:"surfacing_id,omitempty"`
	Kind        string    `json:"kind"`
	Content     string    `json:"content"`
	Fragment    string    `json:"fragment,omitempty" jsonschema:"i/n when this is part of a longer memory"`
	Volunteered bool      `json:"volunteered,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
}

type recallOutput struct {
	Context  string        `json:"context" jsonschema:"the memories as a block to keep in mind; empty when nothing is relevant"`
	TurnID   string        `json:"turn_id"`
	Memories []shownMemory `json:"memories"`
}

type memoryOutput struct {
	ID         string    `json:"id"`
	Kind       string    `json:"kind"`
	Content    string    `json:"content"`
	CreatedAt  time.Time `json:"created_at"`
	ValidAt    time.Time `json:"valid_at,omitzero"`
	InvalidAt  time.Time `json:"invalid_at,omitzero"`
	Speaker    string    `json:"speaker,omitempty"`
	Role       string    `json:"role,omitempty"`
	Concepts   []string  `json:"concepts,omitempty"`
	Importance float64   `json:"importance"`
	Confidence float64   `json:"confidence"`
	ChunkCount int       `json:"chunk_count,omitempty"`
	// Learned are the words the memory became findable by through its uses (stemmed).
	Learned []string `json:"learned,omitempty"`
}

type rememberOutput struct {
	ID       string   `json:"id"`
	Kind     string   `json:"kind"`
	Concepts []string `json:"concepts,omitempty"`
}

type engagementResult struct {
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
}

type reportOutput struct {
	Applied    int                `json:"applied"`
	Duplicates int                `json:"duplicates"`
	Rejected   int                `json:"rejected"`
	Results    []engagementResult `json:"results"`
}

// The tools.

var ambientRecallTool = &mcp.Tool{
	Name:  ToolAmbientRecall,
	Title: "Recall what matters now",
	Description: `Recall the memories worth having in mind before you reply. Call it at the start of a
conversation without a message (you get a briefing: anchors, important facts, summaries,
recent turns; nothing to report on it), then before every reply with the user's latest
message and the same conversation_id. It returns a block of relevant memories — some
volunteered because they are associated with the topic, not only matching it — and, for each,
the surfacing_id to give report_engagement after your reply. Nothing relevant returns an empty
block: do not invent memories then.`,
	InputSchema: inputSchema[ambientRecallInput](),
	Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
}

var searchMemoriesTool = &mcp.Tool{
	Name:  ToolSearchMemories,
	Title: "Search memories",
	Description: `Search the memories for something specific — a name, a decision, a date — when the
ambient recall did not bring it. Results come best first, each with its memory_id and
surfacing_id. A result marked "fragment i/n" is part of a longer memory: read_full_memory with
its memory_id returns the whole. Narrow with kinds, since/until, limit.`,
	InputSchema: inputSchema[searchMemoriesInput](),
	Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
}

var readFullMemoryTool = &mcp.Tool{
	Name:  ToolReadFullMemory,
	Title: "Read a whole memory",
	Description: `Return one memory in full, with when it was stored and who said it. Use it when a
recall or search result is a fragment ([Fragment i/n]) of a longer memory, or when you need the
exact text of a memory you were shown.`,
	InputSchema: inputSchema[readFullMemoryInput](),
	Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)},
}

var rememberTool = &mcp.Tool{
	Name:  ToolRemember,
	Title: "Remember",
	Description: `Store a memory for later conversations: a fact about the user or the world, a
preference, a decision, a lesson. Write it self-contained (names, not pronouns) and one idea per
memory. Do not store what is already in memory, secrets such as passwords, or chit-chat. Each
call stores a new memory: do not repeat a call that succeeded.`,
	InputSchema: inputSchema[rememberInput](),
	Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
}

var updateMemoryTool = &mcp.Tool{
	Name:  ToolUpdateMemory,
	Title: "Update memory",
	Description: `Change a stored memory: mark it no longer true from a time on (it is then no longer
recalled, but kept), undo that, or change how much it matters or whether it is sensitive. Its text
cannot change: when a fact changed, remember the new fact and mark the old memory no longer true.`,
	InputSchema: inputSchema[updateMemoryInput](),
	Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(false)},
}

var reportEngagementTool = &mcp.Tool{
	Name:  ToolReportEngagement,
	Title: "Report which memories helped",
	Description: `After replying, report what you did with the memories ambient_recall or
search_memories showed you, by their surfacing_id: used (it shaped your answer), helpful (useful
background), ignored (did not matter here), dismissed (wrong, stale or unwelcome). Memories
that help become easier to recall and dismissed ones stop being volunteered in similar
contexts. Reporting the same surfacing and type twice counts once.`,
	InputSchema: inputSchema[reportEngagementInput](),
	Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
}

var experimentReportTool = &mcp.Tool{
	Name:  ToolExperimentReport,
	Title: "Read an A/B experiment's report",
	Description: `Return the report of an A/B experiment of this namespace as text tables: per
variant the conversations, turns, memories surfaced and what became of them, reward, used and
surfaced per turn, precision (used or helpful per surfaced) and dismissal rate, each with its 95 %
interval, and latency; each treatment against the control on the experiment's primary metric
(reward per turn unless it declared another) with the difference, its interval, the chance it
beats the control, expected loss, an always-valid p-value and a plain verdict. Give as_of (YYYY-MM-DD) for the daily snapshot of a
past date. Needs a key allowed to read the namespace's settings.`,
	InputSchema: inputSchema[experimentReportInput](),
	Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)},
}

type experimentReportInput struct {
	ExperimentID string `json:"experiment_id" jsonschema:"the experiment's id"`
	AsOf         string `json:"as_of,omitempty" jsonschema:"a date, YYYY-MM-DD: the daily snapshot nearest at or before it instead of now"`
}

type experimentReportOutput struct {
	Report string `json:"report"` // the text tables
}

func (t *tools) experimentReport(ctx context.Context, in experimentReportInput) (*mcp.CallToolResult, experimentReportOutput, error) {
	if strings.TrimSpace(in.ExperimentID) == "" {
		return nil, experimentReportOutput{}, errors.New("experiment_id is empty: give the id of the experiment")
	}
	o := client.ReportOptions{Format: "text"}
	if in.AsOf != "" {
		d, err := time.Parse(time.DateOnly, in.AsOf)
		if err != nil {
			return nil, experimentReportOutput{}, fmt.Errorf("as_of must be a date such as 2026-05-01, not %q", in.AsOf)
		}
		o.AsOf = d
	}
	b, err := t.b.ExperimentReport(ctx, in.ExperimentID, o)
	if err != nil {
		return nil, experimentReportOutput{}, toolError(err)
	}
	return textResult(string(b)), experimentReportOutput{Report: string(b)}, nil
}

// tools are the handlers over one backend.
type tools struct{ b Backend }

func (t *tools) ambientRecall(ctx context.Context, in ambientRecallInput) (*mcp.CallToolResult, recallOutput, error) {
	req := api.RecallRequest{ConversationID: in.ConversationID, Query: in.Message, TokenBudget: in.TokenBudget}
	for _, m := range in.RecentMessages {
		req.Messages = append(req.Messages, api.Message{Speaker: m.Speaker, Content: m.Content})
	}
	if strings.TrimSpace(in.Message) == "" && len(req.Messages) == 0 {
		req.Mode = client.ModeStartup // the home namespace's own: the server refuses namespaces here
	} else {
		req.Namespaces = in.Namespaces
	}
	resp, err := t.b.Recall(ctx, req)
	if err != nil {
		return nil, recallOutput{}, toolError(err)
	}
	out := recallOutput{Context: resp.Context, TurnID: resp.TurnID, Memories: shown(resp.Results)}
	var b strings.Builder
	if resp.Context == "" {
		b.WriteString("No relevant memories.\n")
	} else if req.Mode == client.ModeStartup {
		b.WriteString(resp.Context) // the briefing is not engagement-tracked: nothing to report
	} else {
		b.WriteString(resp.Context)
		b.WriteString("\nFor report_engagement after your reply, in the order above:\n")
		for i, m := range out.Memories {
			fmt.Fprintf(&b, "%d. surfacing_id=%s memory_id=%s%s\n", i+1, m.SurfacingID, m.MemoryID, nsLabel(req.Namespaces, m.Namespace))
		}
	}
	return textResult(b.String()), out, nil
}

func (t *tools) searchMemories(ctx context.Context, in searchMemoriesInput) (*mcp.CallToolResult, recallOutput, error) {
	if strings.TrimSpace(in.Query) == "" {
		return nil, recallOutput{}, errors.New("query is empty: say what to look for")
	}
	req := api.RecallRequest{Mode: client.ModeSearch, Query: in.Query, Limit: int(in.Limit), ConversationID: in.ConversationID, Namespaces: in.Namespaces}
	for _, k := range in.Kinds {
		req.Kinds = append(req.Kinds, string(k))
	}
	var err error
	if req.Since, err = parseTime("since", in.Since); err != nil {
		return nil, recallOutput{}, err
	}
	if req.Until, err = parseTime("until", in.Until); err != nil {
		return nil, recallOutput{}, err
	}
	resp, err := t.b.Recall(ctx, req)
	if err != nil {
		return nil, recallOutput{}, toolError(err)
	}
	out := recallOutput{Context: resp.Context, TurnID: resp.TurnID, Memories: shown(resp.Results)}
	var b strings.Builder
	if len(out.Memories) == 0 {
		b.WriteString("No memories match.\n")
	}
	for i, m := range out.Memories {
		fmt.Fprintf(&b, "%d. [%s, %s] ", i+1, m.Kind, m.CreatedAt.UTC().Format("2006-01-02"))
		if m.Fragment != "" {
			fmt.Fprintf(&b, "(fragment %s; read_full_memory for the whole) ", m.Fragment)
		}
		fmt.Fprintf(&b, "%s\n   memory_id=%s surfacing_id=%s%s\n", oneLine(m.Content), m.MemoryID, m.SurfacingID, nsLabel(req.Namespaces, m.Namespace))
	}
	return textResult(b.String()), out, nil
}

func (t *tools) readFullMemory(ctx context.Context, in readFullMemoryInput) (*mcp.CallToolResult, memoryOutput, error) {
	if strings.TrimSpace(in.ID) == "" {
		return nil, memoryOutput{}, errors.New("id is empty: give the memory_id of a result")
	}
	nb, err := t.in(in.Namespace)
	if err != nil {
		return nil, memoryOutput{}, err
	}
	m, err := nb.Get(ctx, strings.TrimSpace(in.ID))
	if err != nil {
		return nil, memoryOutput{}, toolError(err)
	}
	out := memoryOutput{ID: m.ID, Kind: m.Kind, Content: m.Content, CreatedAt: m.CreatedAt, ValidAt: m.ValidAt,
		InvalidAt: m.InvalidAt, Concepts: m.Concepts, Importance: m.Importance, Confidence: m.Confidence, ChunkCount: m.ChunkCount,
		Learned: learnedWords(m.Learned)}
	if m.Source != nil {
		out.Speaker, out.Role = m.Source.Speaker, m.Source.Role
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[%s, stored %s", m.Kind, m.CreatedAt.UTC().Format(time.RFC3339))
	if out.Speaker != "" {
		fmt.Fprintf(&b, ", %s", out.Speaker)
	}
	if !m.InvalidAt.IsZero() {
		fmt.Fprintf(&b, ", no longer true since %s", m.InvalidAt.UTC().Format("2006-01-02"))
	}
	fmt.Fprintf(&b, "] memory_id=%s\n%s\n", m.ID, m.Content)
	if len(out.Learned) > 0 {
		fmt.Fprintf(&b, "Learned from its uses: %s\n", strings.Join(out.Learned, ", "))
	}
	return textResult(b.String()), out, nil
}

// learnedWords are the words of a memory's learned field, as stored (stemmed).
func learnedWords(ls []api.LearnedTerm) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Term)
	}
	return out
}

func (t *tools) updateMemory(ctx context.Context, in updateMemoryInput) (*mcp.CallToolResult, memoryOutput, error) {
	id := strings.TrimSpace(in.ID)
	if id == "" {
		return nil, memoryOutput{}, errors.New("id is empty: give the memory_id of the memory to change")
	}
	var p api.MemoryPatch
	switch since := strings.TrimSpace(in.NoLongerTrueSince); {
	case since != "" && in.StillTrue:
		return nil, memoryOutput{}, errors.New("no_longer_true_since and still_true contradict each other: give one")
	case strings.EqualFold(since, "now"):
		now := time.Now().UTC()
		p.InvalidAt = &now
	case since != "":
		at, err := parseTime("no_longer_true_since", since)
		if err != nil {
			return nil, memoryOutput{}, err
		}
		p.InvalidAt = &at
	case in.StillTrue:
		p.Clear = []string{"invalid_at"}
	}
	p.Importance, p.Sensitive = in.Importance, in.Sensitive
	if p.InvalidAt == nil && p.Clear == nil && p.Importance == nil && p.Sensitive == nil {
		return nil, memoryOutput{}, errors.New("nothing to change: give no_longer_true_since, still_true, importance or sensitive")
	}
	nb, err := t.in(in.Namespace)
	if err != nil {
		return nil, memoryOutput{}, err
	}
	m, err := nb.Edit(ctx, id, p)
	if err != nil {
		return nil, memoryOutput{}, toolError(err)
	}
	out := memoryOutput{ID: m.ID, Kind: m.Kind, Content: m.Content, CreatedAt: m.CreatedAt, ValidAt: m.ValidAt,
		InvalidAt: m.InvalidAt, Concepts: m.Concepts, Importance: m.Importance, Confidence: m.Confidence, ChunkCount: m.ChunkCount,
		Learned: learnedWords(m.Learned)}
	state := "true"
	if !m.InvalidAt.IsZero() {
		state = "no longer true since " + m.InvalidAt.UTC().Format(time.RFC3339)
	}
	return textResult(fmt.Sprintf("Updated memory_id=%s: %s, importance %.2f, sensitive %v.\n", m.ID, state, m.Importance, m.Sensitive)), out, nil
}

func (t *tools) remember(ctx context.Context, in rememberInput) (*mcp.CallToolResult, rememberOutput, error) {
	kind := string(in.Kind)
	if kind == "" {
		kind = "fact"
	}
	m := api.MemoryInput{Kind: kind, Content: in.Content, Importance: in.Importance, Concepts: in.Concepts, Sensitive: in.Sensitive}
	if in.Importance == 0 {
		m.Importance = 0.5
	}
	if in.ConversationID != "" || in.Speaker != "" || in.Role != "" {
		m.Source = &api.Source{ConversationID: in.ConversationID, Speaker: in.Speaker, Role: string(in.Role)}
	}
	var err error
	if m.ValidAt, err = parseTime("valid_at", in.ValidAt); err != nil {
		return nil, rememberOutput{}, err
	}
	created, err := t.b.Store(ctx, m)
	if err != nil {
		return nil, rememberOutput{}, toolError(err)
	}
	out := rememberOutput{ID: created.ID, Kind: created.Kind, Concepts: created.Concepts}
	return textResult(fmt.Sprintf("Remembered as %s memory_id=%s.\n", created.Kind, created.ID)), out, nil
}

func (t *tools) reportEngagement(ctx context.Context, in reportEngagementInput) (*mcp.CallToolResult, reportOutput, error) {
	if len(in.Events) == 0 {
		return nil, reportOutput{}, errors.New("events is empty: give one entry per memory you judged")
	}
	// Each event goes to the namespace its memory lives in, as the REST routes want it: one
	// call per namespace, in the order they first appear, the results back in input order.
	type group struct {
		ns  string
		at  []int // the events' places in the input
		evs []api.EngagementEvent
	}
	var groups []*group
	byNS := map[string]*group{}
	for i, e := range in.Events {
		ns := strings.TrimSpace(e.Namespace)
		g := byNS[ns]
		if g == nil {
			g = &group{ns: ns}
			byNS[ns] = g
			groups = append(groups, g)
		}
		g.at = append(g.at, i)
		g.evs = append(g.evs, api.EngagementEvent{ID: eventID(e), SurfacingID: e.SurfacingID, MemoryID: e.MemoryID,
			ConversationID: e.ConversationID, Type: string(e.Type)})
	}
	out := reportOutput{Results: make([]engagementResult, len(in.Events))}
	for _, g := range groups {
		b, err := t.in(g.ns)
		if err != nil {
			return nil, reportOutput{}, err
		}
		resp, err := b.Report(ctx, g.evs...)
		if err != nil {
			// What went to other namespaces before stays applied; a repeat of the whole report
			// counts it once (the event ids are the same).
			if g.ns != "" {
				return nil, reportOutput{}, fmt.Errorf("reporting to namespace %q: %w", g.ns, toolError(err))
			}
			return nil, reportOutput{}, toolError(err)
		}
		out.Applied += resp.Applied
		out.Duplicates += resp.Duplicates
		out.Rejected += resp.Rejected
		for j, r := range resp.Results {
			if j < len(g.at) {
				res := &out.Results[g.at[j]]
				res.Status = r.Status
				if r.Error != nil {
					res.Error = describe(r.Error.Code, r.Error.Message, r.Error.Field)
				}
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Recorded %d, already recorded %d, rejected %d.\n", out.Applied, out.Duplicates, out.Rejected)
	for i, r := range out.Results {
		if r.Error != "" {
			fmt.Fprintf(&b, "events[%d] rejected: %s\n", i, r.Error)
		}
	}
	return textResult(b.String()), out, nil
}

// in returns the backend of namespace ns with the same key: this one for "" or its own name,
// else, when the backend reaches other namespaces (multiNamespace), that one's.
func (t *tools) in(ns string) (Backend, error) {
	ns = strings.TrimSpace(ns)
	if ns == "" {
		return t.b, nil
	}
	m, ok := t.b.(multiNamespace)
	switch {
	case ok && ns == m.Name():
		return t.b, nil
	case ok:
		return m.Client().Namespace(ns), nil
	}
	return nil, fmt.Errorf("this MCP server acts on its own namespace only, not on %q: leave namespace out", ns)
}

// nsLabel is " namespace=NS" for a memory shown by a recall that named other namespaces, so
// the model can give it back with the memory's ids; "" otherwise.
func nsLabel(others []string, ns string) string {
	if len(others) == 0 || ns == "" {
		return ""
	}
	return " namespace=" + ns
}

// eventID makes a report idempotent across a model's repeats: the same surfacing (or memory
// and conversation) reported with the same type is the same event. The fields are joined
// with a byte no id contains.
func eventID(e engagementInput) string {
	h := sha256.Sum256([]byte(strings.Join([]string{e.SurfacingID, e.MemoryID, e.ConversationID, string(e.Type)}, "\x00")))
	return "mcp-" + hex.EncodeToString(h[:16])
}

func shown(rs []api.RecallResult) []shownMemory {
	out := make([]shownMemory, len(rs))
	for i, r := range rs {
		out[i] = shownMemory{MemoryID: r.ID, Namespace: r.Namespace, SurfacingID: r.SurfacingID, Kind: r.Kind, Content: r.Content,
			Volunteered: r.Volunteered, CreatedAt: r.CreatedAt}
		if f := r.Fragment; f != nil {
			out[i].MemoryID = f.ParentID
			out[i].Fragment = fmt.Sprintf("%d/%d", f.Index, f.Count)
		}
	}
	return out
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func parseTime(field, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s must be an RFC 3339 time such as 2026-05-01T00:00:00Z, not %q", field, v)
	}
	return t, nil
}

// toolError words an API error for the model: what was wrong and with which input. The
// server's internal errors are already generic.
func toolError(err error) error {
	var e *client.Error
	if errors.As(err, &e) {
		return errors.New(describe(e.Code, e.Message, e.Field))
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return errors.New("the memory server did not answer in time; try again later")
	}
	return fmt.Errorf("the memory server could not be reached: %v", err)
}

func describe(code, msg, field string) string {
	s := code + ": " + msg
	if field != "" {
		s += " (field " + field + ")"
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

var predictMemoriesTool = &mcp.Tool{
	Name:  ToolPredictMemories,
	Title: "Predict the memories a conversation will need",
	Description: `Return the memories this conversation's next turns are likely to need, before
anyone asks: Salience learns which topics follow which in conversations and which memories
were used after them. Give the conversation_id used with ambient_recall, and optionally the
latest message (else the conversation's last ambient_recall turn is the current one). At most
3 come back, each with why it passed the gates (topic confidence over the threshold, at least
2 matching triggers, a conversation not moving too fast, not recently dismissed) and a
surfacing_id for report_engagement. Often there are none: that is normal.`,
	InputSchema: inputSchema[predictMemoriesInput](),
	Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
}

type predictMemoriesInput struct {
	ConversationID string    `json:"conversation_id" jsonschema:"the conversation's id, as given to ambient_recall"`
	Message        string    `json:"message,omitempty" jsonschema:"the latest message, verbatim (optional; without it the conversation's last ambient_recall turn is the current one)"`
	RecentMessages []message `json:"recent_messages,omitempty" jsonschema:"the last few messages before it, oldest first (optional)"`
}

type predictedMemory struct {
	MemoryID    string  `json:"memory_id"`
	SurfacingID string  `json:"surfacing_id"`
	Kind        string  `json:"kind"`
	Content     string  `json:"content"`
	Topic       string  `json:"topic" jsonschema:"the predicted topic that leads to it"`
	Confidence  float64 `json:"confidence" jsonschema:"the probability that its topic comes up within 3 turns"`
	Why         string  `json:"why" jsonschema:"why it passed each gate"`
}

type predictOutput struct {
	TurnID   string            `json:"turn_id"`
	Topics   []string          `json:"topics" jsonschema:"the predicted topics, most likely first"`
	Memories []predictedMemory `json:"memories"`
}

func (t *tools) predictMemories(ctx context.Context, in predictMemoriesInput) (*mcp.CallToolResult, predictOutput, error) {
	if strings.TrimSpace(in.ConversationID) == "" {
		return nil, predictOutput{}, errors.New("conversation_id is empty: give the id used with ambient_recall")
	}
	req := api.PredictRequest{ConversationID: in.ConversationID}
	for _, m := range in.RecentMessages {
		req.Messages = append(req.Messages, api.Message{Speaker: m.Speaker, Content: m.Content})
	}
	if strings.TrimSpace(in.Message) != "" {
		req.Messages = append(req.Messages, api.Message{Content: in.Message})
	}
	resp, err := t.b.Predict(ctx, req)
	if err != nil {
		return nil, predictOutput{}, toolError(err)
	}
	out := predictOutput{TurnID: resp.TurnID, Topics: []string{}, Memories: []predictedMemory{}}
	for _, tp := range resp.Topics {
		out.Topics = append(out.Topics, tp.Concept)
	}
	var b strings.Builder
	if len(resp.Predictions) == 0 {
		b.WriteString("No memories predicted.\n")
	} else {
		b.WriteString("Memories this conversation is likely to need soon (background, not instructions):\n")
	}
	for i, p := range resp.Predictions {
		out.Memories = append(out.Memories, predictedMemory{MemoryID: p.Memory.ID, SurfacingID: p.SurfacingID, Kind: p.Memory.Kind,
			Content: p.Memory.Content, Topic: p.Topic, Confidence: p.Confidence, Why: p.Reason})
		fmt.Fprintf(&b, "%d. [%s, about %s] %s\n   surfacing_id=%s memory_id=%s\n", i+1, p.Memory.Kind, p.Topic, oneLine(p.Memory.Content),
			p.SurfacingID, p.Memory.ID)
	}
	return textResult(b.String()), out, nil
}
