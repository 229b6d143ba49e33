package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/engagement"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/store/sqlite"
)

func TestDecodeEngagement(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ok := `{"events":[{"id":"e1","surfacing_id":"s1","type":"used","at":"2026-01-02T03:04:05Z","concepts":["Berlin"]},` +
		`{"id":"e2","memory_id":"m","conversation_id":"c","type":"shrugged"}]}`
	evs, badAt, err := decodeEngagement([]byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	want := []*models.Event{
		{ID: "e1", SurfacingID: "s1", Type: models.EventUsed, At: at, Concepts: []string{"Berlin"}},
		// An unknown type decodes; the service rejects that event alone.
		{ID: "e2", MemoryID: "m", ConversationID: "c", Type: "shrugged"},
	}
	if !reflect.DeepEqual(evs, want) || badAt != nil {
		t.Errorf("decoded %+v %+v (%v), want %+v %+v", *evs[0], *evs[1], badAt, *want[0], *want[1])
	}
	// An at that is not a time rejects its event alone: nil in evs, its result in badAt.
	evs, badAt, err = decodeEngagement([]byte(`{"events":[{"id":"e1","type":"used","at":"2026-01-02T03:04:05Z"},{"id":"e2","at":"yesterday"},{"id":"e3","at":{}}]}`))
	if err != nil || len(evs) != 3 || evs[0] == nil || !evs[0].At.Equal(at) || evs[1] != nil || evs[2] != nil || len(badAt) != 3 || badAt[0] != nil {
		t.Fatalf("decoded %v, %v, %v", evs, badAt, err)
	}
	for i, id := range map[int]string{1: "e2", 2: "e3"} {
		if r := badAt[i]; r.ID != id || r.Status != engagement.StatusRejected || r.Err.Code != models.EINVALID || r.Err.Field != fmt.Sprintf("events[%d].at", i) {
			t.Errorf("event %d: %+v (%v)", i, r, r.Err)
		}
	}

	tooMany := `{"events":[` + strings.Repeat(`{"id":"x","type":"used"},`, models.MaxBatch) + `{"id":"x","type":"used"}]}`
	for _, c := range []struct {
		name, body, field string
	}{
		{"empty body", ``, ""},
		{"malformed", `{"events":[`, ""},
		{"not an object", `[]`, ""},
		{"no events", `{}`, "events"},
		{"null events", `{"events":null}`, "events"},
		{"empty batch", `{"events":[]}`, "events"},
		{"events not an array", `{"events":{"id":"e"}}`, "events"},
		{"unknown top-level field", `{"events":[],"evnts":[]}`, "evnts"},
		{"unknown event field", `{"events":[{"id":"e","tpye":"used"}]}`, "events[0].tpye"},
		{"wrong type", `{"events":[{"id":"e","type":"used"},{"id":7}]}`, "events[1].id"},
		{"bad time and a bad id", `{"events":[{"id":5,"at":"yesterday"}]}`, "events[0].id"},
		{"bad time, then unknown field", `{"events":[{"at":"yesterday"}],"evnts":1}`, "evnts"},
		{"concepts not a list", `{"events":[{"id":"e","concepts":"x"}]}`, "events[0].concepts"},
		{"too many", tooMany, "events"},
		{"trailing data", `{"events":[{"id":"e"}]} {}`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := decodeEngagement([]byte(c.body))
			if models.ErrorCode(err) != models.EINVALID || models.ErrorField(err) != c.field {
				t.Errorf("err = %v, want EINVALID naming %q", err, c.field)
			}
		})
	}
}

// engagementStack is the real engagement service over a SQLite store, behind a server with
// keys for tenants a and b: namespace a has memories m1, m2 and a turn that surfaced both;
// namespace b has a surfacing sb.
func engagementStack(t *testing.T) (*Server, *sqlite.Store) {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "salience.db"), sqlite.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()
	if err := st.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var ws []*models.MemoryWrite
	for _, m := range []struct{ ns, id string }{{"a", "m1"}, {"a", "m2"}, {"b", "x1"}} {
		ws = append(ws, &models.MemoryWrite{Memory: &models.Memory{ID: m.id, Namespace: m.ns, Kind: models.KindFact,
			Content: "memory " + m.id, CreatedAt: now.Add(-time.Hour), Confidence: 0.5}})
	}
	if err := st.CreateMemories(ctx, ws); err != nil {
		t.Fatal(err)
	}
	sf := func(ns, id, mem string) *models.Surfacing {
		return &models.Surfacing{ID: id, Namespace: ns, ConversationID: "c1", TurnID: "t1", MemoryID: mem,
			Mode: models.ModeAmbient, ConvType: models.ConvCasual, Concepts: []string{"bees"}, LatencyMS: 4, At: now.Add(-time.Minute)}
	}
	if err := st.RecordSurfacings(ctx, []*models.Surfacing{sf("a", "s1", "m1"), sf("a", "s2", "m2")}, nil); err != nil {
		t.Fatal(err)
	}
	if err := st.RecordSurfacings(ctx, []*models.Surfacing{sf("b", "sb", "x1")}, nil); err != nil {
		t.Fatal(err)
	}
	keys, err := ParseKeys([]byte(`{"keys":[
		{"key":"sk-tenant-a-0000000","namespaces":["a"]},
		{"key":"sk-tenant-b-0000000","namespaces":["b"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	svc := engagement.NewService(st, engagement.ServiceOptions{Now: func() time.Time { return now }})
	s, _ := newTestServer(t, Config{Engagement: svc, Reports: svc, Keys: keys, Now: func() time.Time { return now }})
	return s, st
}

const keyA = "Bearer sk-tenant-a-0000000"

func TestEngagementOverHTTP(t *testing.T) {
	s, st := engagementStack(t)
	h := s.Handler()
	batch := `{"events":[
		{"id":"e1","surfacing_id":"s1","type":"used"},
		{"id":"e2","surfacing_id":"sb","type":"used"},
		{"id":"e3","surfacing_id":"s2","type":"liked"},
		{"id":"e4","memory_id":"m2","conversation_id":"c1","type":"helpful","at":"2026-03-01T12:00:00Z"},
		{"id":"e5","surfacing_id":"s1","type":"ignored","at":"2026-03-01T12:10:00Z"}]}`
	res, body := do(t, h, "POST", "/v1/namespaces/a/engagement", batch, "Authorization", keyA)
	if res.StatusCode != 200 {
		t.Fatalf("status %d: %s", res.StatusCode, body)
	}
	var got api.EngagementResponse
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	want := api.EngagementResponse{Applied: 2, Duplicates: 0, Rejected: 3, Results: []api.EngagementResult{
		{ID: "e1", Status: "applied"},
		// Namespace b's surfacing does not exist for namespace a.
		{ID: "e2", Status: "rejected", Error: &api.Error{Code: "not_found", Message: "surfacing sb not found in namespace a", Field: "events[1].surfacing_id"}},
		{ID: "e3", Status: "rejected", Error: &api.Error{Code: "invalid", Message: `unknown event type "liked" (one of used, helpful, ignored, dismissed)`, Field: "events[2].type"}},
		{ID: "e4", Status: "applied"},
		{ID: "e5", Status: "rejected", Error: &api.Error{Code: "invalid",
			Message: "at 2026-03-01T12:10:00Z is more than 5m0s ahead of the server's clock (2026-03-01T12:00:00Z)", Field: "events[4].at"}},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("response %s\nwant %+v", body, want)
	}
	m, err := st.GetMemory(context.Background(), "a", "m2")
	if err != nil || m.UsageCount != 1 || m.Confidence != 0.6 {
		t.Errorf("m2 = %+v, %v; want one use at confidence 0.6", m, err)
	}
	if x, err := st.GetMemory(context.Background(), "b", "x1"); err != nil || x.UsageCount != 0 || x.Confidence != 0.5 {
		t.Errorf("namespace b's memory changed: %+v, %v", x, err)
	}

	// A replay changes nothing and says so.
	_, body = do(t, h, "POST", "/v1/namespaces/a/engagement", batch, "Authorization", keyA)
	if err := json.Unmarshal(body, &got); err != nil || got.Applied != 0 || got.Duplicates != 2 || got.Rejected != 3 {
		t.Errorf("replay = %s", body)
	}
	// Every event rejected is still a 200: the errors are per event.
	res, body = do(t, h, "POST", "/v1/namespaces/a/engagement", `{"events":[{"id":"z","surfacing_id":"nope","type":"used"}]}`, "Authorization", keyA)
	if err := json.Unmarshal(body, &got); res.StatusCode != 200 || err != nil || got.Rejected != 1 || got.Results[0].Error.Code != "not_found" {
		t.Errorf("all rejected = %d %s", res.StatusCode, body)
	}
	// A key of namespace a cannot report on namespace b at all.
	res, body = do(t, h, "POST", "/v1/namespaces/b/engagement", `{"events":[{"id":"z","surfacing_id":"sb","type":"used"}]}`, "Authorization", keyA)
	if res.StatusCode != 403 || errorOf(t, body).Code != "forbidden" {
		t.Errorf("cross-tenant report = %d %s", res.StatusCode, body)
	}
	// A body that is not a batch is a 400 naming the field.
	res, body = do(t, h, "POST", "/v1/namespaces/a/engagement", `{"events":[{"id":"e","surfacing_id":"s1","typ":"used"}]}`, "Authorization", keyA)
	if e := errorOf(t, body); res.StatusCode != 400 || e.Field != "events[0].typ" {
		t.Errorf("unknown field = %d %s", res.StatusCode, body)
	}
}

func TestNamespaceMetricsOverHTTP(t *testing.T) {
	s, _ := engagementStack(t)
	h := s.Handler()
	res, body := do(t, h, "POST", "/v1/namespaces/a/engagement",
		`{"events":[{"id":"e1","surfacing_id":"s1","type":"used"},{"id":"e2","surfacing_id":"s2","type":"dismissed"}]}`, "Authorization", keyA)
	if res.StatusCode != 200 {
		t.Fatalf("report: %d %s", res.StatusCode, body)
	}
	res, body = do(t, h, "GET", "/v1/namespaces/a/metrics?since=2026-03-01T00:00:00Z", "", "Authorization", keyA)
	if res.StatusCode != 200 {
		t.Fatalf("metrics: %d %s", res.StatusCode, body)
	}
	var got api.MetricsResponse
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	half := api.OutcomeCounts{Surfaced: 2, Used: 1, Dismissed: 1, Precision: 0.5, DismissalRate: 0.5}
	want := api.MetricsResponse{
		Namespace: "a", Since: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), Conversations: 1, Turns: 1,
		Overall: half, ByConversationType: map[string]api.OutcomeCounts{"casual": half}, ByMode: map[string]api.OutcomeCounts{"ambient": half},
		Events:      api.EventCounts{Total: 2, Used: 1, Dismissed: 1},
		Latency:     api.LatencyPercentiles{Calls: 1, P50MS: 4, P95MS: 4},
		Graph:       api.GraphHealth{Nodes: 2, Edges: 1, AvgDegree: 1, Communities: 1},
		Calibration: api.Calibration{N: 2},
	}
	// The surfacings' p_use is the prior model's; their calibration has its own tests.
	if pu := got.Calibration.PUse; pu.N != 2 || pu.Rate != 0.5 {
		t.Errorf("p_use calibration %+v, want 2 outcomes at rate 0.5", pu)
	}
	got.Calibration.PUse, got.Calibration.ByConvType = api.PUseCalibration{}, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("metrics %s\nwant %+v", body, want)
	}
	for _, c := range []struct{ query, field string }{
		{"?since=yesterday", "since"},
		{"?until=2026-01-01T00:00:00Z&since=2026-02-01T00:00:00Z", "until"},
		{"?sinse=2026-01-01T00:00:00Z", "sinse"},
		{"?since=2026-01-01T00:00:00Z&since=2026-01-02T00:00:00Z", "since"},
	} {
		res, body := do(t, h, "GET", "/v1/namespaces/a/metrics"+c.query, "", "Authorization", keyA)
		if e := errorOf(t, body); res.StatusCode != 400 || e.Field != c.field {
			t.Errorf("%s = %d %s, want 400 naming %s", c.query, res.StatusCode, body, c.field)
		}
	}
	if res, body := do(t, h, "GET", "/v1/namespaces/b/metrics", "", "Authorization", keyA); res.StatusCode != 403 {
		t.Errorf("cross-tenant metrics = %d %s", res.StatusCode, body)
	}
}

func TestEngagementRoutesWithoutServices(t *testing.T) {
	s, _ := newTestServer(t, Config{})
	for _, r := range []struct{ method, path, body string }{
		{"POST", "/v1/namespaces/a/engagement", `{"events":[{"id":"e","surfacing_id":"s","type":"used"}]}`},
		{"GET", "/v1/namespaces/a/metrics", ""},
	} {
		res, body := do(t, s.Handler(), r.method, r.path, r.body)
		if res.StatusCode != 503 || errorOf(t, body).Code != "unavailable" {
			t.Errorf("%s %s = %d %s, want 503", r.method, r.path, res.StatusCode, body)
		}
	}
}

// FuzzDecodeEngagement feeds arbitrary bodies to the engagement decoder: it must never panic
// and every error must be a 4xx naming what is wrong. Run it with
// go test -run=^$ -fuzz=^FuzzDecodeEngagement$ -fuzztime=30s ./server
func FuzzDecodeEngagement(f *testing.F) {
	for _, s := range []string{
		`{"events":[{"id":"e1","surfacing_id":"s1","type":"used"}]}`,
		`{"events":[{"id":"e1","memory_id":"m","conversation_id":"c","type":"helpful","at":"2026-01-02T03:04:05+02:00","concepts":["Berlin","bees"]}]}`,
		`{"events":[{"id":"e","type":"dismissed","concepts":[]},{"id":"f","type":"ignored","at":null}]}`,
		`{"events":[]}`, `{"events":null}`, `{"events":[null]}`, `{"events":{}}`, `{}`, `[]`, `null`, ``,
		`{"events":[{"id":"e","tpye":"used"}]}`, `{"events":[{"id":1}]}`, `{"events":[{"at":"2026-13-45T99:99:99Z"}]}`,
		`{"events":[{"id":"\ud800","concepts":["\u0000"]}]}`, `{"events":[{"id":"e"}]} {}`, `{"Events":[{"ID":"e","TYPE":"used"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		evs, badAt, err := decodeEngagement(body)
		checkClientError(t, err)
		if err != nil {
			return
		}
		if len(evs) < 1 || len(evs) > models.MaxBatch || (badAt != nil && len(badAt) != len(evs)) {
			t.Fatalf("decoded %d events, %d results", len(evs), len(badAt))
		}
		for i, e := range evs {
			switch {
			case badAt == nil || badAt[i] == nil:
				if e == nil {
					t.Fatalf("event %d is nil", i)
				}
			case e != nil || badAt[i].Status != engagement.StatusRejected || badAt[i].Err.Field != fmt.Sprintf("events[%d].at", i):
				t.Fatalf("event %d: %+v with result %+v", i, e, badAt[i])
			}
		}
	})
}

// FuzzParseMetricsQuery feeds arbitrary query strings to the metrics route's parser: no
// panic, and every error is a 4xx naming a parameter.
func FuzzParseMetricsQuery(f *testing.F) {
	for _, s := range []string{
		"", "since=2026-01-01T00:00:00Z", "until=2026-01-01T00:00:00Z&since=2025-01-01T00:00:00Z",
		"since=yesterday", "since=a&since=b", "sinse=x", "since=2026-01-01T00:00:00.123456789%2B02:00", "%zz", "until=",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		since, until, err := parseMetricsQuery(q)
		checkClientError(t, err)
		if err != nil {
			if models.ErrorField(err) == "" {
				t.Fatalf("error %v names no parameter", err)
			}
			return
		}
		if !since.IsZero() && !until.IsZero() && !until.After(since) {
			t.Fatalf("accepted since %v ≥ until %v", since, until)
		}
	})
}
