package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/client"
	"github.com/salience-ai/salience/internal/testserver"
)

// The acceptance tests of namespace settings (issue 16), end to end through the client and
// the OpenAPI-validating transport.

func keyed(t *testing.T, srv *testserver.Server, v *testserver.Validator, key string) *client.Client {
	t.Helper()
	return newClient(t, srv, v, client.WithKey(key))
}

func TestSettingsRoundTripAndAudit(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{WithKeys: true})
	v := testserver.NewValidator(t, nil)
	ns := keyed(t, srv, v, testserver.KeyAdmin).Namespace("a")
	ctx := context.Background()

	fresh, err := ns.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if fresh.Version != 0 || fresh.Weights != nil || fresh.UpdatedBy != "" {
		t.Errorf("unwritten settings = %+v, want version 0 and no overrides", fresh)
	}
	div, noCooldown := 0.4, 0.0
	want := api.Settings{
		Weights:                map[string]api.ScoreWeights{"search": {Relevance: 0.5, Importance: 0.5}},
		FreshnessHalfLifeHours: 48, Diversity: &div, Startup: &api.StartupLimits{Crystals: 5}, Rerank: "off",
		// A cooldown of 0 hours (none) is a setting, not its absence: it must come back.
		Decay:                    &api.DecaySettings{Policy: "linear", Threshold: 0.5, TargetRetention: 0.85, DismissCooldownHours: &noCooldown},
		ImplicitIgnoreAfterHours: 2,
	}
	put, err := ns.PutSettings(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ns.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 1 || got.UpdatedBy != "ops" || got.UpdatedAt.IsZero() || !got.UpdatedAt.Equal(put.UpdatedAt) {
		t.Errorf("settings = version %d by %q at %v; want 1 by ops at %v", got.Version, got.UpdatedBy, got.UpdatedAt, put.UpdatedAt)
	}
	got.Version, got.UpdatedAt, got.UpdatedBy = 0, time.Time{}, ""
	if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
		t.Errorf("round trip:\n got %s\nwant %s", g, w)
	}

	// The same settings again are no change: no new version, no audit entry.
	if again, err := ns.PutSettings(ctx, want); err != nil || again.Version != 1 {
		t.Errorf("the same put again = %+v, %v; want version 1", again, err)
	}
	// A patch merges; null returns a setting to the default.
	patched, err := ns.PatchSettings(ctx, map[string]any{"rerank": nil, "weights": map[string]any{"ambient": map[string]any{"freshness": 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if patched.Version != 2 || patched.Rerank != "" || patched.Weights["search"].Importance != 0.5 || patched.Weights["ambient"].Freshness != 1 {
		t.Errorf("patched = %+v", patched)
	}
	// A writer that read version 1 loses to the one that wrote version 2.
	stale := want
	stale.Version = 1
	if _, err := ns.PutSettings(ctx, stale); client.ErrorCode(err) != client.CodeConflict {
		t.Errorf("put at a stale version: %v, want conflict", err)
	}

	hist, err := ns.SettingsHistory(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 2 || hist[0].Version != 2 || hist[1].Version != 1 || hist[0].By != "ops" {
		t.Fatalf("history = %+v, want versions 2 then 1 by ops", hist)
	}
	var fields []string
	for _, c := range hist[0].Changes {
		fields = append(fields, c.Field+": "+string(c.Old)+" -> "+string(c.New))
	}
	if g, w := strings.Join(fields, "; "), `rerank: "off" -> null; weights.ambient.confidence: null -> 0; weights.ambient.freshness: null -> 1; weights.ambient.importance: null -> 0; weights.ambient.novelty: null -> 0; weights.ambient.proximity: null -> 0; weights.ambient.relevance: null -> 0`; g != w {
		t.Errorf("changes of version 2:\n got %s\nwant %s", g, w)
	}
}

func TestSettingsValidationNamesTheField(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	v := testserver.NewValidator(t, nil)
	c := newClient(t, srv, v)
	ctx := context.Background()
	ns := c.Namespace("v")
	for _, tc := range []struct {
		patch map[string]any
		field string
	}{
		{map[string]any{"weights": map[string]any{"search": map[string]any{"relevance": 2}}}, "weights.search.relevance"},
		{map[string]any{"weights": map[string]any{"search": map[string]any{"relevance": 0}}}, "weights.search"},
		{map[string]any{"weights": map[string]any{"search": map[string]any{"charm": 0.5}}}, "weights.search.charm"},
		{map[string]any{"freshness_half_life_hours": -1}, "freshness_half_life_hours"},
		// Issue 39: a half-life below the documented hour silenced recall.
		{map[string]any{"freshness_half_life_hours": 1e-9}, "freshness_half_life_hours"},
		{map[string]any{"freshness_half_life_hours": 0.99}, "freshness_half_life_hours"},
		{map[string]any{"freshness_half_life_hours": 87601}, "freshness_half_life_hours"},
		// Issue 39: the document's read-only fields are not settings a patch can change.
		{map[string]any{"updated_by": "mallory"}, "updated_by"},
		{map[string]any{"updated_at": "2026-01-01T00:00:00Z"}, "updated_at"},
		{map[string]any{"updated_by": nil}, "updated_by"},
		{map[string]any{"diversity": 1.5}, "diversity"},
		{map[string]any{"startup": map[string]any{"anchors": 101}}, "startup.anchors"},
		{map[string]any{"startup": map[string]any{"facts": -1}}, "startup.facts"},
		{map[string]any{"decay": map[string]any{"policy": "sm2"}}, "decay.policy"},
		{map[string]any{"decay": map[string]any{"threshold": -0.5}}, "decay.threshold"},
		{map[string]any{"decay": map[string]any{"threshold": 2e6}}, "decay.threshold"},
		{map[string]any{"decay": map[string]any{"target_retention": 1}}, "decay.target_retention"},
		{map[string]any{"decay": map[string]any{"target_retention": -0.1}}, "decay.target_retention"},
		{map[string]any{"decay": map[string]any{"dismiss_cooldown_hours": -1}}, "decay.dismiss_cooldown_hours"},
		{map[string]any{"decay": map[string]any{"dismiss_cooldown_hours": 9000}}, "decay.dismiss_cooldown_hours"},
		{map[string]any{"decay": map[string]any{"half_life": 3}}, "decay.half_life"},
		{map[string]any{"implicit_ignore_after_hours": -1}, "implicit_ignore_after_hours"},
		{map[string]any{"implicit_ignore_after_hours": 721}, "implicit_ignore_after_hours"},
		{map[string]any{"implicit_ignore_after_hours": "30m"}, "implicit_ignore_after_hours"},
		{map[string]any{"history_retention_days": 0.5}, "history_retention_days"},
		{map[string]any{"history_retention_days": -1}, "history_retention_days"},
		{map[string]any{"history_retention_days": 36501}, "history_retention_days"},
		{map[string]any{"rerank": "sometimes"}, "rerank"},
		{map[string]any{"threshold_policy": "greedy"}, "threshold_policy"},
		{map[string]any{"threshold_policy": "fixed:1.5"}, "threshold_policy"},
		// Issue 39: decimal numbers only.
		{map[string]any{"threshold_policy": "fixed:1e-400"}, "threshold_policy"},
		{map[string]any{"threshold_policy": "fixed:0x1p-2"}, "threshold_policy"},
		{map[string]any{"empty_turn_reward": 1.5}, "empty_turn_reward"},
		{map[string]any{"colour": "blue"}, "colour"},
		{map[string]any{"diversity": "high"}, "diversity"},
	} {
		_, err := ns.PatchSettings(ctx, tc.patch)
		var e *client.Error
		if client.ErrorCode(err) != client.CodeInvalid || !errors.As(err, &e) || e.Field != tc.field {
			t.Errorf("patch %v: %v, want invalid naming %s", tc.patch, err, tc.field)
		}
	}
	// The startup mode has no weights: the mode is the field at fault.
	_, err := ns.PatchSettings(ctx, map[string]any{"weights": map[string]any{"startup": map[string]any{"relevance": 1}}})
	var e *client.Error
	if !errors.As(err, &e) || e.Code != client.CodeInvalid || e.Field != "weights.startup" {
		t.Errorf("weights for startup: %v, want invalid naming weights.startup", err)
	}
	if got, err := ns.Settings(ctx); err != nil || got.Version != 0 {
		t.Errorf("after only rejected writes: %+v, %v; want version 0", got, err)
	}
	// The history's one parameter, limit, is checked as the listing routes check theirs:
	// once, an integer from 1 to 1000, no other name.
	for _, tc := range []struct{ query, field string }{
		{"limit=5", ""},
		{"limit=0", "limit"},
		{"limit=", "limit"},
		{"limit=1001", "limit"},
		{"limit=&limit=x", "limit"},
		{"limit=2&limit=3", "limit"},
		{"limt=2", "limt"},
	} {
		res := getRaw(t, srv.URL+"/v1/namespaces/v/settings/history?"+tc.query, "")
		if want := map[bool]int{true: 200, false: 400}[tc.field == ""]; res.status != want || res.field != tc.field {
			t.Errorf("history?%s: %d naming %q, want %d naming %q", tc.query, res.status, res.field, want, tc.field)
		}
	}
	if got, err := ns.PatchSettings(ctx, map[string]any{"history_retention_days": 30}); err != nil || got.HistoryRetentionDays != 30 || got.Version != 1 {
		t.Errorf("history_retention_days 30: %+v, %v", got, err)
	}
	// The bounds themselves, a 0 (the default) and a plain decimal threshold are taken.
	for _, patch := range []map[string]any{
		{"freshness_half_life_hours": 1}, {"freshness_half_life_hours": 87600}, {"freshness_half_life_hours": 0},
		{"threshold_policy": "fixed:0.25"},
	} {
		if _, err := ns.PatchSettings(ctx, patch); err != nil {
			t.Errorf("patch %v: %v", patch, err)
		}
	}
}

func TestSettingsAuthorization(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		writers string
		key     string
		ns      string
		want    string // "" = allowed
	}{
		{"", testserver.KeyAdmin, "a", ""},
		{"", testserver.KeyA, "a", client.CodeForbidden},
		{"", testserver.KeyAll, "a", client.CodeForbidden},
		{"namespace", testserver.KeyA, "a", ""},
		{"namespace", testserver.KeyA, "b", client.CodeForbidden},
		{"namespace", testserver.KeyAdmin, "b", ""},
	} {
		srv := testserver.Start(t, testserver.Options{WithKeys: true, SettingsWriters: tc.writers})
		ns := keyed(t, srv, testserver.NewValidator(t, nil), tc.key).Namespace(tc.ns)
		_, errGet := ns.Settings(ctx)
		_, errPut := ns.PutSettings(ctx, api.Settings{Rerank: "off"})
		_, errPatch := ns.PatchSettings(ctx, map[string]any{"rerank": "on"})
		_, errHist := ns.SettingsHistory(ctx, 0)
		for name, err := range map[string]error{"get": errGet, "put": errPut, "patch": errPatch, "history": errHist} {
			if got := client.ErrorCode(err); got != tc.want {
				t.Errorf("writers %q, key %s, namespace %s, %s: %v, want %q", tc.writers, tc.key[:10], tc.ns, name, err, tc.want)
			}
		}
	}
}

// TestAffinityWeightsRankAsTheySay: two fresh namespaces with the same two memories — one
// old and important, one new and minor, both matching the query alike — and different
// characters rank them in opposite orders: the namespace that weighs only importance puts
// the old one first, the one that weighs only freshness the new one. A third namespace
// changes its weights between two recalls, and the second recall follows them at once.
func TestAffinityWeightsRankAsTheySay(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	c := newClient(t, srv, testserver.NewValidator(t, nil))
	ctx := context.Background()
	now := time.Now().UTC()
	seed := func(name string) (oldID, newID string) {
		ns := c.Namespace(name)
		ms, err := ns.StoreBatch(ctx, []api.MemoryInput{
			{Kind: "fact", Content: "The lighthouse keeper painted the lighthouse door red.", Importance: 0.9, CreatedAt: now.Add(-90 * 24 * time.Hour)},
			{Kind: "fact", Content: "The lighthouse keeper painted the lighthouse door blue.", Importance: 0.1, CreatedAt: now.Add(-time.Hour)},
		})
		if err != nil {
			t.Fatal(err)
		}
		return ms[0].ID, ms[1].ID
	}
	order := func(name string) ([]string, int) {
		resp, err := c.Namespace(name).Recall(ctx, api.RecallRequest{Mode: client.ModeSearch, Query: "lighthouse door painted", Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range resp.Results {
			ids = append(ids, r.ID)
		}
		return ids, resp.SettingsVersion
	}
	importance := map[string]any{"weights": map[string]any{"search": map[string]any{"importance": 1}}}
	freshness := map[string]any{"weights": map[string]any{"search": map[string]any{"freshness": 1}}}

	dreamOld, dreamNew := seed("dream")
	marcusOld, marcusNew := seed("marcus")
	if _, err := c.Namespace("dream").PatchSettings(ctx, importance); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Namespace("marcus").PatchSettings(ctx, freshness); err != nil {
		t.Fatal(err)
	}
	if got, ver := order("dream"); ver != 1 || len(got) != 2 || got[0] != dreamOld || got[1] != dreamNew {
		t.Errorf("dream (importance) = %v at version %d, want [%s %s] at 1", got, ver, dreamOld, dreamNew)
	}
	if got, ver := order("marcus"); ver != 1 || len(got) != 2 || got[0] != marcusNew || got[1] != marcusOld {
		t.Errorf("marcus (freshness) = %v at version %d, want [%s %s] at 1", got, ver, marcusNew, marcusOld)
	}

	// A change takes effect on the next recall, no restart; the surfacings say under which
	// version they were ranked.
	dottyOld, dottyNew := seed("dotty")
	if _, err := c.Namespace("dotty").PatchSettings(ctx, importance); err != nil {
		t.Fatal(err)
	}
	if got, _ := order("dotty"); len(got) != 2 || got[0] != dottyOld {
		t.Fatalf("dotty (importance) = %v, want %s first", got, dottyOld)
	}
	if _, err := c.Namespace("dotty").PatchSettings(ctx, freshness); err != nil {
		t.Fatal(err)
	}
	resp, err := c.Namespace("dotty").Recall(ctx, api.RecallRequest{Mode: client.ModeSearch, Query: "lighthouse door painted", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if resp.SettingsVersion != 2 || len(resp.Results) != 2 || resp.Results[0].ID != dottyNew {
		t.Fatalf("dotty after the change = version %d, %+v; want version 2, %s first", resp.SettingsVersion, resp.Results, dottyNew)
	}
	s, err := srv.Store.GetSurfacing(ctx, "dotty", resp.Results[0].SurfacingID)
	if err != nil {
		t.Fatal(err)
	}
	if s.SettingsVersion != 2 {
		t.Errorf("surfacing settings_version = %d, want 2", s.SettingsVersion)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPutSettingsRejectsNull: a PUT body of null would decode as "no settings at all" and
// reset every setting; it is a 400 (Schemathesis found it accepted).
func TestPutSettingsRejectsNull(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	req, err := http.NewRequest(http.MethodPut, srv.URL+"/v1/namespaces/v/settings", strings.NewReader("null"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `"code":"invalid"`) {
		t.Fatalf("PUT null: %d %s, want 400 invalid", res.StatusCode, body)
	}
}

// TestThresholdPolicySetting: a namespace's threshold_policy decides the ambient turns of
// requests that name none (fixed:0.999 on p_use holds back a fresh namespace's best match; off
// holds nothing back), a request's own policy still wins, and empty_turn_reward round-trips.
func TestThresholdPolicySetting(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	c := newClient(t, srv, testserver.NewValidator(t, nil))
	ctx := context.Background()
	ns := c.Namespace("quiet")
	if _, err := ns.StoreBatch(ctx, []api.MemoryInput{{Kind: "fact", Content: "The harbor ferry to Skye leaves at seven every morning."}}); err != nil {
		t.Fatal(err)
	}
	ask := func(conv, policy string) *api.RecallResponse {
		t.Helper()
		resp, err := ns.Recall(ctx, api.RecallRequest{ConversationID: conv, Query: "when does the harbor ferry to Skye leave", ThresholdPolicy: policy})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if r := ask("c0", ""); r.ThresholdPolicy != "bandit" {
		t.Fatalf("no setting: policy %q, want bandit", r.ThresholdPolicy)
	}
	reward := 0.25
	got, err := ns.PatchSettings(ctx, map[string]any{"threshold_policy": "fixed:0.999", "empty_turn_reward": reward})
	if err != nil || got.ThresholdPolicy != "fixed:0.999" || got.EmptyTurnReward == nil || *got.EmptyTurnReward != reward {
		t.Fatalf("patch = %+v, %v", got, err)
	}
	if r := ask("c1", ""); r.ThresholdPolicy != "fixed:0.999" || r.Threshold != 0.999 || len(r.Results) != 0 || r.Context != "" {
		t.Errorf("namespace fixed:0.999: policy %q threshold %v, %d results; want an empty turn", r.ThresholdPolicy, r.Threshold, len(r.Results))
	}
	if r := ask("c2", "off"); r.ThresholdPolicy != "off" || len(r.Results) != 1 {
		t.Errorf("request off over the namespace's fixed:0.999: policy %q, %d results; want off, 1", r.ThresholdPolicy, len(r.Results))
	}
}
