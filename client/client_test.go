package client_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/client"
	"github.com/salience-ai/salience/internal/testserver"
)

// The tests here run the client against the real server (router, SQLite store, ingest,
// recall, engagement, jobs) through a transport that validates every exchange against
// server/openapi.yaml.

func newClient(t *testing.T, srv *testserver.Server, v *testserver.Validator, opts ...client.Option) *client.Client {
	t.Helper()
	opts = append([]client.Option{client.WithHTTPClient(&http.Client{Transport: v})}, opts...)
	c, err := client.New(srv.URL, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestTourOfEveryRoute calls every route of the API through the client, checks what comes
// back, and at the end that every documented operation was called.
func TestTourOfEveryRoute(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	v := testserver.NewValidator(t, nil)
	c := newClient(t, srv, v)
	ctx := context.Background()
	ns := c.Namespace("tour")

	if err := c.Health(ctx); err != nil {
		t.Fatalf("health: %v", err)
	}
	if err := c.WaitReady(ctx, 10*time.Millisecond); err != nil {
		t.Fatalf("ready: %v", err)
	}

	// Store: one memory, then a batch with a long memory the server chunks.
	bees, err := ns.Store(ctx, api.MemoryInput{Kind: "fact", Content: "Nadia keeps her bees on the roof of the old cannery.",
		Importance: 0.7, Domains: []string{"hobbies"}, Source: &api.Source{ConversationID: "c1", Speaker: "nadia"}})
	if err != nil {
		t.Fatal(err)
	}
	if bees.ID == "" || bees.Namespace != "tour" || bees.Kind != "fact" || bees.Importance != 0.7 || bees.Confidence != 0.5 ||
		bees.Source == nil || bees.Source.Speaker != "nadia" {
		t.Errorf("stored %+v", bees)
	}
	long := strings.Repeat("The lighthouse keeper logs the weather every morning before dawn. ", 30) +
		"At the very end of the log he notes that the lamp needs a new mantle."
	old := time.Now().Add(-400 * 24 * time.Hour).UTC().Truncate(time.Second)
	batch, err := ns.StoreBatch(ctx, []api.MemoryInput{
		{Kind: "document", Content: long},
		{Kind: "turn", Content: "I want to repaint the kitchen yellow.", Source: &api.Source{ConversationID: "c1", Speaker: "user"}},
		{Kind: "fact", Content: "The cannery roof was repaired with copper sheeting.", CreatedAt: old},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(batch) != 3 || batch[0].ChunkCount < 2 || batch[1].Kind != "turn" || !batch[2].CreatedAt.Equal(old) {
		t.Fatalf("batch = %+v", batch)
	}
	lighthouse := batch[0]

	// Recall in each mode.
	amb, err := ns.Recall(ctx, api.RecallRequest{ConversationID: "c1", Query: "where does Nadia keep her bees?"})
	if err != nil {
		t.Fatal(err)
	}
	if len(amb.Results) == 0 || amb.Results[0].ID != bees.ID || amb.Results[0].SurfacingID == "" || amb.TurnID == "" ||
		!strings.Contains(amb.Context, "old cannery") {
		t.Fatalf("ambient recall = %+v", amb)
	}
	search, err := ns.Recall(ctx, api.RecallRequest{Mode: client.ModeSearch, Query: "lamp mantle lighthouse", Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(search.Results) == 0 || search.Results[0].Fragment == nil || search.Results[0].Fragment.ParentID != lighthouse.ID ||
		search.Results[0].Components == nil {
		t.Fatalf("search = %+v", search)
	}
	startup, err := ns.Recall(ctx, api.RecallRequest{Mode: client.ModeStartup, ConversationID: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	if startup.Startup == nil || startup.Startup.Memories != 4 || !slices.ContainsFunc(startup.Results, func(r api.RecallResult) bool { return r.ID == batch[1].ID }) {
		t.Errorf("startup = %+v", startup)
	}

	// Predict: nothing learned in this namespace yet, so nothing predicted, but an answer.
	pred, err := ns.Predict(ctx, api.PredictRequest{ConversationID: "c1", Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	if pred.TurnID == "" || len(pred.Predictions) != 0 || pred.Topics == nil || pred.ThresholdPolicy != "bandit" {
		t.Errorf("predict = %+v", pred)
	}

	// Get hydrates a fragment: the parent's id returns the whole memory.
	whole, err := ns.Get(ctx, search.Results[0].Fragment.ParentID)
	if err != nil {
		t.Fatal(err)
	}
	if whole.Content != long {
		t.Errorf("hydrated content has %d bytes, want the whole %d", len(whole.Content), len(long))
	}

	// List: filters and paging.
	page, err := ns.List(ctx, client.ListOptions{Kinds: []string{"fact"}, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if page.Total != 2 || len(page.Memories) != 1 || page.Memories[0].ID != bees.ID {
		t.Errorf("list facts, limit 1 = %d of %d, first %q; want 1 of 2, newest (%s) first", len(page.Memories), page.Total, firstID(page.Memories), bees.ID)
	}
	page, err = ns.List(ctx, client.ListOptions{Kinds: []string{"fact"}, Limit: 1, Offset: 1, Until: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Memories) != 1 || page.Memories[0].ID != batch[2].ID {
		t.Errorf("list facts, offset 1 = %v, want %s", page.Memories, batch[2].ID)
	}
	page, err = ns.List(ctx, client.ListOptions{ConversationID: "c1", Since: old.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if page.Total != 2 {
		t.Errorf("list conversation c1 = %d memories, want 2", page.Total)
	}

	// Engagement: applied, then a duplicate, and a rejected event.
	used := api.EngagementEvent{ID: "ev-1", SurfacingID: amb.Results[0].SurfacingID, Type: client.EventUsed}
	rep, err := ns.Report(ctx, used)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Applied != 1 || rep.Results[0].Status != "applied" {
		t.Errorf("report = %+v, want 1 applied", rep)
	}
	rep, err = ns.Report(ctx, used, api.EngagementEvent{SurfacingID: "no-such-surfacing", Type: client.EventHelpful})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Duplicates != 1 || rep.Rejected != 1 || rep.Results[1].Error == nil || rep.Results[1].Error.Code != "not_found" ||
		rep.Results[1].Error.Field != "events[1].surfacing_id" {
		t.Errorf("report = %+v, want a duplicate and a rejection naming events[1].surfacing_id", rep)
	}
	got, err := ns.Get(ctx, bees.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.UsageCount != 1 || got.Confidence <= 0.5 {
		t.Errorf("after a use: usage %d, confidence %v; want 1 and above 0.5", got.UsageCount, got.Confidence)
	}
	m, err := ns.Metrics(ctx, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	// Two turns: the ambient and the search recall (startup records none).
	if m.Namespace != "tour" || m.Events.Used != 1 || m.Overall.Used != 1 || m.Turns != 2 {
		t.Errorf("metrics: namespace %q, used events %d, used %d, turns %d; want tour, 1, 1, 2", m.Namespace, m.Events.Used, m.Overall.Used, m.Turns)
	}

	// The threshold bandit: every type, at its prior until bandit-upkeep rewards a turn.
	th, err := ns.Thresholds(ctx)
	if err != nil || th.Namespace != "tour" || len(th.Types) != 5 {
		t.Fatalf("thresholds = %+v, %v", th, err)
	}
	if d := th.Types[0]; d.ConversationType != "debugging" || d.DefaultThreshold != 0.2 || d.Best != 0.2 || len(d.Arms) != 5 || d.Arms[1].Alpha != 6 {
		t.Errorf("debugging thresholds = %+v, want the prior Beta(6, 4) peaked on 0.2 (0.6 on the source scale)", d)
	}

	// Admin: namespaces, jobs, a manual run and its history, then the queue it fills.
	names, err := c.Namespaces(ctx)
	if err != nil || !slices.Contains(names, "tour") {
		t.Errorf("namespaces = %v, %v", names, err)
	}
	lex := api.Embedder{Name: "local-hash-v1-256", Dims: 256}
	if nss, err := c.NamespaceEmbedders(ctx); err != nil || nss.Embedders["tour"] != lex || nss.Embedder == nil || *nss.Embedder != lex {
		t.Errorf("namespace embedders = %+v, %v; want tour's and the server's %v", nss, err, lex)
	}
	// The tour reported one use: the relevance model learned from one event.
	if rl, err := c.Relearn(ctx, "tour", false); err != nil || rl.Events != 1 || rl.Version != 1 || rl.MaxDiff != 0 {
		t.Errorf("relearn = %+v, %v; want 1 event, version 1, max diff 0", rl, err)
	}
	jobs, err := c.Jobs(ctx)
	if err != nil || len(jobs) != 7 {
		t.Fatalf("jobs = %+v, %v", jobs, err)
	}
	run, err := c.RunJob(ctx, "decay-scan")
	if err != nil {
		t.Fatal(err)
	}
	if run.Job != "decay-scan" || run.Trigger != "manual" {
		t.Errorf("run = %+v", run)
	}
	var runs []api.JobRun
	for deadline := time.Now().Add(10 * time.Second); ; {
		if runs, err = c.JobRuns(ctx, "decay-scan", 5); err != nil {
			t.Fatal(err)
		}
		if len(runs) > 0 && runs[0].Finished || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(runs) != 1 || runs[0].ID != run.ID || !runs[0].Finished || runs[0].Error != "" {
		t.Fatalf("runs = %+v, want the finished manual run", runs)
	}
	queue, err := ns.Resurfacing(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(queue) != runs[0].Items {
		t.Errorf("queue holds %d items, the scan queued %d", len(queue), runs[0].Items)
	}
	if i := slices.IndexFunc(queue, func(it api.ResurfaceItem) bool { return it.MemoryID == batch[2].ID }); i < 0 {
		t.Errorf("queue = %+v, want the 400-day-old fact, never used, due again", queue)
	} else if queue[i].Memory.Content != batch[2].Content {
		t.Errorf("queued memory = %+v", queue[i].Memory)
	}

	// Settings: a write, a patch, the record and its history.
	if _, err := ns.PutSettings(ctx, api.Settings{Rerank: "off"}); err != nil {
		t.Fatal(err)
	}
	set, err := ns.PatchSettings(ctx, map[string]any{"diversity": 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if set.Version != 2 || set.Rerank != "off" || set.Diversity == nil || *set.Diversity != 0.5 {
		t.Errorf("settings after put and patch = %+v, want version 2, rerank off, diversity 0.5", set)
	}
	if got, err := ns.Settings(ctx); err != nil || got.Version != 2 {
		t.Errorf("settings = %+v, %v; want version 2", got, err)
	}
	if hist, err := ns.SettingsHistory(ctx, 0); err != nil || len(hist) != 2 || hist[0].Version != 2 {
		t.Errorf("settings history = %+v, %v; want versions 2 and 1, newest first", hist, err)
	}

	// An experiment: create, list, get, report, stop.
	e, err := ns.CreateExperiment(ctx, twoVariants())
	if err != nil {
		t.Fatal(err)
	}
	if list, err := ns.Experiments(ctx); err != nil || len(list) != 1 {
		t.Errorf("experiments = %+v, %v", list, err)
	}
	if got, err := ns.Experiment(ctx, e.ID); err != nil || got.ID != e.ID {
		t.Errorf("experiment = %+v, %v", got, err)
	}
	if rep, err := ns.ExperimentReport(ctx, e.ID, client.ReportOptions{}); err != nil || !strings.Contains(string(rep), e.ID) {
		t.Errorf("experiment report = %.200s, %v", rep, err)
	}
	if got, err := ns.StopExperiment(ctx, e.ID); err != nil || got.Status != "stopped" {
		t.Errorf("stop = %+v, %v", got, err)
	}

	// Edit: retire the fact and raise its importance, then clear the end of its validity.
	until, imp := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 0.9
	if got, err := ns.Edit(ctx, bees.ID, api.MemoryPatch{Importance: &imp, InvalidAt: &until}); err != nil ||
		got.ID != bees.ID || got.Importance != 0.9 || !got.InvalidAt.Equal(until) || got.Content != bees.Content {
		t.Errorf("edit = %+v, %v", got, err)
	}
	if got, err := ns.Edit(ctx, bees.ID, api.MemoryPatch{Clear: []string{"invalid_at"}}); err != nil || !got.InvalidAt.IsZero() || got.Importance != 0.9 {
		t.Errorf("edit clearing invalid_at = %+v, %v", got, err)
	}
	var bad *client.Error
	if _, err := ns.Edit(ctx, bees.ID, api.MemoryPatch{Importance: new(2.0)}); !errors.As(err, &bad) || bad.Code != client.CodeInvalid || bad.Field != "importance" {
		t.Errorf("edit with importance 2 = %v, want invalid importance", err)
	}

	// Delete, and the memory is gone.
	if err := ns.Delete(ctx, bees.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := ns.Get(ctx, bees.ID); client.ErrorCode(err) != client.CodeNotFound {
		t.Errorf("get after delete = %v, want not_found", err)
	}

	// Delete the namespace: nothing of it is left.
	if d, err := c.DeleteNamespace(ctx, "tour"); err != nil || d.Namespace != "tour" || d.Memories < 1 || d.Records <= d.Memories {
		t.Errorf("delete namespace = %+v, %v", d, err)
	}
	if list, err := ns.List(ctx, client.ListOptions{}); err != nil || len(list.Memories) != 0 {
		t.Errorf("memories after deleting the namespace = %+v, %v", list, err)
	}

	// Every documented operation was called, and the client's routes are all documented
	// (an undocumented one fails in the validator).
	seen := map[string]bool{}
	for _, op := range v.Seen() {
		seen[op] = true
	}
	for _, op := range v.Operations() {
		if !seen[op] && client.LeftOut[op] == "" {
			t.Errorf("%s is documented but the client never called it", op)
		}
	}
}

func firstID(ms []api.Memory) string {
	if len(ms) == 0 {
		return ""
	}
	return ms[0].ID
}

// TestErrorMapping checks the *Error of each kind of refusal from the real server.
func TestErrorMapping(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{WithKeys: true})
	v := testserver.NewValidator(t, nil)
	ctx := context.Background()
	a := newClient(t, srv, v, client.WithKey(testserver.KeyA))
	admin := newClient(t, srv, v, client.WithKey(testserver.KeyAdmin))
	nokey := newClient(t, srv, v)
	unknown := newClient(t, srv, v, client.WithKey("sk-nobody-0000000000000"))
	stored, err := a.Namespace("a").Store(ctx, api.MemoryInput{Kind: "fact", Content: "the sky is blue"})
	if err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name   string
		call   func() error
		status int
		code   string
		field  string
	}{
		{"bad kind", func() error {
			_, err := a.Namespace("a").Store(ctx, api.MemoryInput{Kind: "poem", Content: "x"})
			return err
		}, 400, client.CodeInvalid, "kind"},
		{"bad batch item", func() error {
			_, err := a.Namespace("a").StoreBatch(ctx, []api.MemoryInput{{Kind: "fact", Content: "x"}, {Kind: "fact"}})
			return err
		}, 400, client.CodeInvalid, "memories[1].content"},
		{"empty batch", func() error {
			_, err := a.Namespace("a").StoreBatch(ctx, nil)
			return err
		}, 400, client.CodeInvalid, "memories"},
		{"bad recall mode", func() error {
			_, err := a.Namespace("a").Recall(ctx, api.RecallRequest{Mode: "psychic", Query: "x"})
			return err
		}, 400, client.CodeInvalid, "mode"},
		{"bad list limit", func() error {
			_, err := a.Namespace("a").List(ctx, client.ListOptions{Limit: 5000})
			return err
		}, 400, client.CodeInvalid, "limit"},
		{"metrics window backwards", func() error {
			_, err := a.Namespace("a").Metrics(ctx, time.Now(), time.Now().Add(-time.Hour))
			return err
		}, 400, client.CodeInvalid, "until"},
		{"no events", func() error {
			_, err := a.Namespace("a").Report(ctx)
			return err
		}, 400, client.CodeInvalid, "events"},
		{"bad namespace name", func() error {
			_, err := a.Namespace("-nope").Get(ctx, stored.ID)
			return err
		}, 400, client.CodeInvalid, "namespace"},
		{"unknown memory", func() error {
			_, err := a.Namespace("a").Get(ctx, "01J00000000000000000000000")
			return err
		}, 404, client.CodeNotFound, ""},
		{"delete unknown memory", func() error {
			return a.Namespace("a").Delete(ctx, "01J00000000000000000000000")
		}, 404, client.CodeNotFound, ""},
		{"no key", func() error {
			_, err := nokey.Namespace("a").Get(ctx, stored.ID)
			return err
		}, 401, client.CodeUnauthorized, ""},
		{"unknown key", func() error {
			_, err := unknown.Namespace("a").Recall(ctx, api.RecallRequest{Query: "sky"})
			return err
		}, 401, client.CodeUnauthorized, ""},
		{"other namespace", func() error {
			_, err := a.Namespace("b").List(ctx, client.ListOptions{})
			return err
		}, 403, client.CodeForbidden, ""},
		{"not admin", func() error {
			_, err := a.Namespaces(ctx)
			return err
		}, 403, client.CodeForbidden, ""},
		{"unknown job", func() error {
			_, err := admin.JobRuns(ctx, "no-such-job", 0)
			return err
		}, 404, client.CodeNotFound, ""},
		{"run unknown job", func() error {
			_, err := admin.RunJob(ctx, "no-such-job")
			return err
		}, 404, client.CodeNotFound, ""},
		{"bad runs limit", func() error {
			_, err := admin.JobRuns(ctx, "decay-scan", 5000)
			return err
		}, 400, client.CodeInvalid, "limit"},
		{"bad queue limit", func() error {
			_, err := a.Namespace("a").Resurfacing(ctx, -1)
			return err
		}, 400, client.CodeInvalid, "limit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.call()
			var e *client.Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want an *Error", err)
			}
			if e.Status != c.status || e.Code != c.code || e.Field != c.field || e.Message == "" || e.RequestID == "" {
				t.Errorf("error = %+v, want %d %s field %q with a message and request id", *e, c.status, c.code, c.field)
			}
		})
	}

	// The admin key reads the namespaces; the key of namespace a reads a.
	if names, err := admin.Namespaces(ctx); err != nil || !slices.Equal(names, []string{"a"}) {
		t.Errorf("namespaces = %v, %v", names, err)
	}
	if _, err := a.Namespace("a").Get(ctx, stored.ID); err != nil {
		t.Errorf("get with the granted key: %v", err)
	}
}
