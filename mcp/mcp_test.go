package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/client"
	"github.com/salience-ai/salience/internal/mcptest"
	"github.com/salience-ai/salience/internal/testserver"
	salmcp "github.com/salience-ai/salience/mcp"
)

// withKey adds a bearer key to every request.
type withKey struct {
	key  string
	next http.RoundTripper
}

func (k withKey) RoundTrip(r *http.Request) (*http.Response, error) {
	if k.key != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+k.key)
	}
	return k.next.RoundTrip(r)
}

// withHeader sets a header on every request.
type withHeader struct {
	name, value string
	next        http.RoundTripper
}

func (h withHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.name, h.value)
	return h.next.RoundTrip(r)
}

// connectHTTP opens an MCP session on /mcp/{ns} of srv with key, through the OpenAPI
// validator.
func connectHTTP(t *testing.T, srv *testserver.Server, v *testserver.Validator, ns, key string) (*mcp.ClientSession, error) {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "salience-test", Version: "v0"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp/" + ns, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: withKey{key, v}}}
	s, err := c.Connect(context.Background(), tr, nil)
	if err == nil {
		t.Cleanup(func() { s.Close() })
	}
	return s, err
}

// TestToolsOverStreamableHTTP runs every tool through /mcp/{ns} of the real server.
func TestToolsOverStreamableHTTP(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	v := testserver.NewValidator(t, nil)
	s, err := connectHTTP(t, srv, v, "agent", "")
	if err != nil {
		t.Fatal(err)
	}
	mcptest.Exercise(t, s)
	if seen := strings.Join(v.Seen(), ","); seen != "POST /mcp/{ns}" {
		t.Errorf("the client sent %s, want only POST /mcp/{ns}", seen)
	}
	// What the tools stored is in the namespace of the URL, seen through the REST API.
	c, _ := client.New(srv.URL)
	page, err := c.Namespace("agent").List(context.Background(), client.ListOptions{})
	if err != nil || page.Total != 2 {
		t.Errorf("namespace agent holds %v memories (%v), want the 2 remembered", page, err)
	}
}

// TestStartupBriefsRememberedFacts is issue 41, failure 5 as an agent meets it: it stored two
// facts with remember, and the startup briefing its instructions promise said "No relevant
// memories.". The briefing now holds both.
func TestStartupBriefsRememberedFacts(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	s, err := connectHTTP(t, srv, testserver.NewValidator(t, nil), "agent", "")
	if err != nil {
		t.Fatal(err)
	}
	facts := []string{"Nadia keeps her bees on the roof of the old cannery.", "Omar is allergic to peanuts and shellfish."}
	for _, f := range facts {
		mcptest.OK(t, s, "remember", map[string]any{"content": f}, nil)
	}
	var startup mcptest.Recall
	text := mcptest.OK(t, s, "ambient_recall", map[string]any{"conversation_id": "c1"}, &startup)
	for _, f := range facts {
		if !strings.Contains(text, f) {
			t.Errorf("the startup briefing lacks %q:\n%s", f, text)
		}
	}
	if strings.Contains(text, "surfacing_id") {
		t.Errorf("the startup briefing asks for reports on memories it does not track:\n%s", text)
	}
	if len(startup.Memories) != len(facts) {
		t.Errorf("the startup briefing lists %d memories, want %d: %+v", len(startup.Memories), len(facts), startup.Memories)
	}
}

// TestNamespaceGrantsHoldThroughMCP: a key reaches only the namespaces it is granted, as on
// the REST routes.
func TestNamespaceGrantsHoldThroughMCP(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{WithKeys: true})
	v := testserver.NewValidator(t, nil)
	ctx := context.Background()

	// A memory of namespace b.
	cb, _ := client.New(srv.URL, client.WithKey(testserver.KeyB))
	secret, err := cb.Namespace("b").Store(ctx, api.MemoryInput{Kind: "fact", Content: "Tenant b's launch code name is Bluebird."})
	if err != nil {
		t.Fatal(err)
	}

	// Key A cannot open b's endpoint, nor open any without a key.
	if _, err := connectHTTP(t, srv, v, "b", testserver.KeyA); err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Errorf("key A on /mcp/b: %v, want a 403 refusal", err)
	}
	if _, err := connectHTTP(t, srv, v, "a", ""); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Errorf("no key on /mcp/a: %v, want a 401 refusal", err)
	}
	if _, err := connectHTTP(t, srv, v, "a", testserver.KeyAdminB); err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Errorf("the admin key of b on /mcp/a: %v, want a 403 refusal", err)
	}

	// The refusal is the API's own, with its error shape.
	req, _ := http.NewRequest("POST", srv.URL+"/mcp/b", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+testserver.KeyA)
	res, err := (&http.Client{Transport: v}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var body api.ErrorResponse
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil || res.StatusCode != 403 || body.Error.Code != "forbidden" {
		t.Errorf("key A on /mcp/b = %d %+v (%v), want 403 forbidden", res.StatusCode, body, err)
	}
	res.Body.Close()

	// On its own endpoint, key A finds nothing of b's, even by id.
	sa, err := connectHTTP(t, srv, v, "a", testserver.KeyA)
	if err != nil {
		t.Fatal(err)
	}
	mcptest.Fails(t, sa, "read_full_memory", map[string]any{"id": secret.ID}, "not_found")
	var found mcptest.Recall
	mcptest.OK(t, sa, "search_memories", map[string]any{"query": "Bluebird launch code"}, &found)
	if len(found.Memories) != 0 {
		t.Errorf("key A's search found %+v in namespace a", found.Memories)
	}
	mcptest.OK(t, sa, "remember", map[string]any{"content": "Tenant a prefers tea."}, nil)

	// Nor by naming b in the header the route uses to hand the namespace to the tools.
	mc := mcp.NewClient(&mcp.Implementation{Name: "sneaky", Version: "v0"}, nil)
	sneaky, err := mc.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp/a",
		HTTPClient: &http.Client{Transport: withHeader{"X-Salience-Mcp-Namespace", "b", withKey{testserver.KeyA, v}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sneaky.Close()
	mcptest.Fails(t, sneaky, "read_full_memory", map[string]any{"id": secret.ID}, "not_found")

	// Key B, granted b, reads its memory through MCP; and a's memory stayed in a.
	sb, err := connectHTTP(t, srv, v, "b", testserver.KeyB)
	if err != nil {
		t.Fatal(err)
	}
	var whole struct{ Content string }
	mcptest.OK(t, sb, "read_full_memory", map[string]any{"id": secret.ID}, &whole)
	if whole.Content != secret.Content {
		t.Errorf("key B read %q", whole.Content)
	}
	if page, err := cb.Namespace("b").List(ctx, client.ListOptions{}); err != nil || page.Total != 1 {
		t.Errorf("namespace b = %v, %v; want only its own memory", page, err)
	}

	// Extra namespaces: key A may not name b among them, in either recall tool, nor read or
	// report there; the refusal names the namespace and its place in namespaces.
	for _, call := range []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"search_memories", map[string]any{"query": "Bluebird launch code", "namespaces": []string{"b"}}, []string{"forbidden", `"b"`, "namespaces[0]"}},
		{"ambient_recall", map[string]any{"message": "What is the launch code name?", "namespaces": []string{"b"}}, []string{"forbidden", `"b"`, "namespaces[0]"}},
		{"read_full_memory", map[string]any{"id": secret.ID, "namespace": "b"}, []string{"forbidden", `"b"`}},
		{"report_engagement", map[string]any{"events": []any{map[string]any{"memory_id": secret.ID, "conversation_id": "c", "type": "used", "namespace": "b"}}}, []string{"forbidden", `"b"`}},
	} {
		failsWith(t, sa, call.tool, call.args, call.want...)
	}

	// A key granted a and shared recalls both through /mcp/a, each memory labelled; one
	// namespace it lacks among them is refused, naming it.
	cs, _ := client.New(srv.URL, client.WithKey(testserver.KeyShared))
	leak, err := cs.Namespace("shared").Store(ctx,
		api.MemoryInput{Kind: "fact", Content: "The cannery roof leaks when it rains."})
	if err != nil {
		t.Fatal(err)
	}
	ss, err := connectHTTP(t, srv, v, "a", testserver.KeyShared)
	if err != nil {
		t.Fatal(err)
	}
	var both mcptest.Recall
	text := mcptest.OK(t, ss, "search_memories", map[string]any{"query": "cannery roof leaks", "conversation_id": "c9", "namespaces": []string{"shared"}}, &both)
	var shared *mcptest.Shown
	for i, m := range both.Memories {
		if m.MemoryID == leak.ID {
			shared = &both.Memories[i]
		}
	}
	if shared == nil || shared.Namespace != "shared" || !strings.Contains(text, "namespace=shared") {
		t.Fatalf("search in a and shared = %+v\n%s\nwant %s labelled shared", both.Memories, text, leak.ID)
	}
	failsWith(t, ss, "search_memories", map[string]any{"query": "cannery roof", "namespaces": []string{"shared", "b"}}, "forbidden", `"b"`, "namespaces[1]")
	failsWith(t, ss, "ambient_recall", map[string]any{"message": "Does the cannery roof leak?", "namespaces": []string{"shared", "b"}}, "forbidden", `"b"`, "namespaces[1]")

	// Engagement on the shared memory goes where it lives, as on the REST routes: with its
	// namespace it is applied there; without, this namespace has no such surfacing.
	var rep struct {
		Applied, Rejected int
		Results           []struct{ Status, Error string }
	}
	mcptest.OK(t, ss, "report_engagement", map[string]any{"events": []any{
		map[string]any{"surfacing_id": shared.SurfacingID, "type": "ignored"},
		map[string]any{"surfacing_id": shared.SurfacingID, "type": "used", "namespace": "shared"},
	}}, &rep)
	if rep.Applied != 1 || rep.Rejected != 1 || rep.Results[0].Status != "rejected" || !strings.Contains(rep.Results[0].Error, "not_found") ||
		rep.Results[1].Status != "applied" {
		t.Errorf("report on the shared memory = %+v, want the one naming shared applied, the other not found", rep)
	}
	var whole2 struct{ ID string }
	mcptest.OK(t, ss, "read_full_memory", map[string]any{"id": leak.ID, "namespace": "shared"}, &whole2)
	if m, err := cs.Namespace("shared").Get(ctx, leak.ID); err != nil || m.UsageCount != 1 || whole2.ID != leak.ID {
		t.Errorf("the shared memory after the report: %+v, %v; want used once", m, err)
	}
}

// failsWith calls a tool that must fail with a tool error whose text contains each of want.
func failsWith(t *testing.T, s *mcp.ClientSession, tool string, args map[string]any, want ...string) {
	t.Helper()
	res := mcptest.Call(t, s, tool, args)
	text := mcptest.Text(res)
	if !res.IsError {
		t.Errorf("%s(%v) succeeded with %q, want a tool error", tool, args, text)
		return
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("%s(%v) error = %q, want it to contain %q", tool, args, text, w)
		}
	}
}

// stub is a Backend that fails or panics on demand.
type stub struct {
	err       error
	panic     bool
	got       []api.EngagementEvent
	predicted []api.PredictRequest
}

func (s *stub) Recall(context.Context, api.RecallRequest) (*api.RecallResponse, error) {
	if s.panic {
		panic("boom")
	}
	return nil, s.err
}
func (s *stub) Store(context.Context, api.MemoryInput) (*api.Memory, error)        { return nil, s.err }
func (s *stub) Get(context.Context, string) (*api.Memory, error)                   { return nil, s.err }
func (s *stub) Edit(context.Context, string, api.MemoryPatch) (*api.Memory, error) { return nil, s.err }
func (s *stub) Report(_ context.Context, evs ...api.EngagementEvent) (*api.EngagementResponse, error) {
	s.got = append(s.got, evs...)
	if s.err != nil {
		return nil, s.err
	}
	return &api.EngagementResponse{Applied: len(evs), Results: make([]api.EngagementResult, len(evs))}, nil
}
func (s *stub) ExperimentReport(context.Context, string, client.ReportOptions) ([]byte, error) {
	return []byte("report"), s.err
}
func (s *stub) Predict(_ context.Context, req api.PredictRequest) (*api.PredictResponse, error) {
	s.predicted = append(s.predicted, req)
	if s.err != nil {
		return nil, s.err
	}
	return &api.PredictResponse{TurnID: "t1", Proactive: api.Proactive{Topics: []api.PredictedTopic{{Concept: "helm", P: 0.9, From: "kubernetes"}}},
		Predictions: []api.PredictedMemory{{Memory: api.Memory{ID: "m1", Kind: "fact", Content: "Helm values live in the ops repo."},
			SurfacingID: "s1", Confidence: 0.9, Topic: "helm", From: "kubernetes", Matches: []string{"kubernetes", "deploy"}, Surfaced: true, Reason: "passed every gate"}}}, nil
}

func connectInMemory(t *testing.T, b salmcp.Backend) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := salmcp.NewServer(b, salmcp.Options{Version: "test"}).Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "v0"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestFailuresAreToolErrors(t *testing.T) {
	b := &stub{panic: true}
	s := connectInMemory(t, b)
	mcptest.Fails(t, s, "ambient_recall", map[string]any{"message": "hi"}, "internal error in ambient_recall")
	// The session survives the panic.
	b.panic = false
	b.err = &client.Error{Status: 503, Code: "unavailable", Message: "the server is loading its indexes; retry shortly"}
	mcptest.Fails(t, s, "search_memories", map[string]any{"query": "x"}, "unavailable: the server is loading its indexes; retry shortly")
	b.err = &client.Error{Status: 400, Code: "invalid", Message: "content is empty", Field: "content"}
	mcptest.Fails(t, s, "remember", map[string]any{"content": "x"}, "invalid: content is empty (field content)")
	b.err = errors.New("dial tcp 127.0.0.1:7700: connection refused")
	mcptest.Fails(t, s, "read_full_memory", map[string]any{"id": "m1"}, "could not be reached")
	b.err = context.DeadlineExceeded
	mcptest.Fails(t, s, "read_full_memory", map[string]any{"id": "m1"}, "did not answer in time")
	mcptest.Fails(t, s, "ambient_recall", map[string]any{"message": 42}, "message")
	// A written limit of 0 is refused as the API refuses it (issue 39), not sent as "default".
	mcptest.Fails(t, s, "search_memories", map[string]any{"query": "x", "limit": 0}, "limit")
	mcptest.Fails(t, s, "search_memories", map[string]any{"query": "x", "limit": 101}, "limit")
}

// TestEngagementEventIDs: a model repeating a report sends the same event ids, so the server
// counts it once; a different type or surfacing is a different event.
func TestEngagementEventIDs(t *testing.T) {
	b := &stub{}
	s := connectInMemory(t, b)
	ev := func(sid, typ string) map[string]any { return map[string]any{"surfacing_id": sid, "type": typ} }
	mcptest.OK(t, s, "report_engagement", map[string]any{"events": []any{ev("s1", "used"), ev("s1", "ignored"), ev("s2", "used")}}, nil)
	mcptest.OK(t, s, "report_engagement", map[string]any{"events": []any{ev("s1", "used")}}, nil)
	ids := make([]string, len(b.got))
	for i, e := range b.got {
		ids[i] = e.ID
	}
	if ids[0] != ids[3] || ids[0] == ids[1] || ids[0] == ids[2] || !strings.HasPrefix(ids[0], "mcp-") || len(ids[0]) != 36 {
		t.Errorf("event ids = %q: want the repeat equal to the first and the others distinct", ids)
	}
	// A literal value (sha256 of "s1\x00\x00\x00used", first 16 bytes), so a change of the
	// scheme, which would count again reports repeated across an upgrade, is deliberate.
	if want := "mcp-74adeca088f408745fc804c3ef94523d"; ids[0] != want {
		t.Errorf("id = %q, want %q", ids[0], want)
	}
}

// TestHostCheck: without keys the server is loopback-only, and a request that reached it under
// another host name (a web page after DNS rebinding) is refused; with keys it needs the
// bearer secret anyway, and a reverse proxy may forward under the public name.
func TestHostCheck(t *testing.T) {
	post := func(srv *testserver.Server, key string) int {
		req, _ := http.NewRequest("POST", srv.URL+"/mcp/a", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Host = "salience.example.com"
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if got := post(testserver.Start(t, testserver.Options{}), ""); got != http.StatusForbidden {
		t.Errorf("no keys, foreign host = %d, want 403", got)
	}
	if got := post(testserver.Start(t, testserver.Options{WithKeys: true}), testserver.KeyA); got != http.StatusOK {
		t.Errorf("keys, foreign host = %d, want 200", got)
	}
}

// TestExperimentReportTool: the tool returns the server's text tables of an experiment.
func TestExperimentReportTool(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	v := testserver.NewValidator(t, nil)
	c, _ := client.New(srv.URL)
	e, err := c.Namespace("agent").CreateExperiment(context.Background(), api.ExperimentCreate{Name: "half-life", Variants: []api.Variant{
		{Name: "control", Share: 0.5}, {Name: "short-half-life", Share: 0.5, Overrides: api.VariantOverrides{FreshnessHalfLifeHours: 24}}}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := connectHTTP(t, srv, v, "agent", "")
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ Report string }
	text := mcptest.OK(t, s, "experiment_report", map[string]any{"experiment_id": e.ID}, &out)
	for _, want := range []string{"half-life", "control", "short-half-life"} {
		if !strings.Contains(text, want) || !strings.Contains(out.Report, want) {
			t.Errorf("experiment_report lacks %q:\n%s", want, text)
		}
	}
}

// TestPredictMemoriesTool: the tool sends the conversation and its messages (the latest
// last) and shows each prediction with its surfacing id and why it passed.
func TestPredictMemoriesTool(t *testing.T) {
	b := &stub{}
	s := connectInMemory(t, b)
	var out struct {
		TurnID   string   `json:"turn_id"`
		Topics   []string `json:"topics"`
		Memories []struct {
			MemoryID    string  `json:"memory_id"`
			SurfacingID string  `json:"surfacing_id"`
			Topic       string  `json:"topic"`
			Confidence  float64 `json:"confidence"`
			Why         string  `json:"why"`
		} `json:"memories"`
	}
	text := mcptest.OK(t, s, "predict_memories", map[string]any{"conversation_id": "c1", "message": "the deploy failed",
		"recent_messages": []map[string]any{{"speaker": "user", "content": "Kubernetes again"}}}, &out)
	if len(b.predicted) != 1 {
		t.Fatalf("backend called %d times", len(b.predicted))
	}
	req := b.predicted[0]
	if req.ConversationID != "c1" || len(req.Messages) != 2 || req.Messages[0].Content != "Kubernetes again" || req.Messages[1].Content != "the deploy failed" {
		t.Errorf("request = %+v", req)
	}
	if out.TurnID != "t1" || len(out.Topics) != 1 || out.Topics[0] != "helm" || len(out.Memories) != 1 ||
		out.Memories[0].SurfacingID != "s1" || out.Memories[0].Why != "passed every gate" || out.Memories[0].Confidence != 0.9 {
		t.Errorf("output = %+v", out)
	}
	if !strings.Contains(text, "surfacing_id=s1 memory_id=m1") || !strings.Contains(text, "Helm values live in the ops repo.") {
		t.Errorf("text = %q", text)
	}
	mcptest.Fails(t, s, "predict_memories", map[string]any{}, "conversation_id")
	b.err = &client.Error{Status: 400, Code: "invalid", Message: "bad", Field: "messages"}
	mcptest.Fails(t, s, "predict_memories", map[string]any{"conversation_id": "c1"}, "invalid: bad (field messages)")
}

// storing is a Backend that keeps what remember stores.
type storing struct {
	stub
	stored []api.MemoryInput
}

func (s *storing) Store(_ context.Context, m api.MemoryInput) (*api.Memory, error) {
	s.stored = append(s.stored, m)
	return &api.Memory{ID: "m1", Kind: m.Kind, Content: m.Content, Source: m.Source}, nil
}

// TestRememberRole: what the agent stores about itself carries role assistant, so recall
// never takes its own words as evidence; a role outside the schema's two is refused.
func TestRememberRole(t *testing.T) {
	b := &storing{}
	s := connectInMemory(t, b)
	mcptest.OK(t, s, "remember", map[string]any{"content": "I promised to send the agenda on Monday.", "role": "assistant"}, nil)
	mcptest.OK(t, s, "remember", map[string]any{"content": "The user's sister lives in Leeds."}, nil)
	if len(b.stored) != 2 || b.stored[0].Source == nil || b.stored[0].Source.Role != client.RoleAssistant || b.stored[1].Source != nil {
		t.Fatalf("stored %+v, want the first with role assistant and the second with no source", b.stored)
	}
	failsWith(t, s, "remember", map[string]any{"content": "x", "role": "narrator"}, "role")
	if len(b.stored) != 2 {
		t.Errorf("a memory with an unknown role was stored: %+v", b.stored[2:])
	}
}
