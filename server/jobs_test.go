package server

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/jobs"
	"github.com/salience-ai/salience/models"
)

var jobT0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// fakeScheduler is a JobScheduler with one known job, "decay-scan", that is running when
// busy is set.
type fakeScheduler struct {
	mu       sync.Mutex
	busy     bool
	triggers int
	limit    int
}

func (f *fakeScheduler) Jobs(context.Context) ([]jobs.Status, error) {
	last := &models.JobRun{ID: "r1", Job: "decay-scan", Holder: "h1", Trigger: "cron", Start: jobT0, End: jobT0.Add(time.Second), Items: 3, Finished: true}
	return []jobs.Status{
		{Name: "decay-scan", Spec: "@every 1h", Scheduled: true, Next: jobT0.Add(time.Hour), Last: last},
		{Name: "edge-decay", Spec: "@daily", Scheduled: true, Next: jobT0.Add(15 * time.Hour), Running: &models.JobRun{ID: "r2"}},
	}, nil
}

func (f *fakeScheduler) Runs(_ context.Context, name string, limit int) ([]*models.JobRun, error) {
	if name != "decay-scan" {
		return nil, models.Errorf(models.ENOTFOUND, "no job named %q", name)
	}
	f.mu.Lock()
	f.limit = limit
	f.mu.Unlock()
	return []*models.JobRun{
		{ID: "r2", Job: name, Holder: "h1", Trigger: "manual", Start: jobT0.Add(time.Hour)},
		{ID: "r1", Job: name, Holder: "h1", Trigger: "cron", Start: jobT0, End: jobT0.Add(time.Second), Items: 3, Error: "boom", Finished: true},
	}, nil
}

func (f *fakeScheduler) Trigger(_ context.Context, name string) (*models.JobRun, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case name != "decay-scan":
		return nil, models.Errorf(models.ENOTFOUND, "no job named %q", name)
	case f.busy:
		return nil, models.Errorf(models.ECONFLICT, "job %s is already running", name)
	}
	f.busy = true
	f.triggers++
	return &models.JobRun{ID: "r3", Job: name, Holder: "h1", Trigger: "manual", Start: jobT0}, nil
}

// fakeQueue holds a namespace's queue; the memory "gone" was deleted after it was queued,
// and "retired", "secret" and "cooling" changed since so they would no longer be queued.
type fakeQueue struct{ limit int }

func (f *fakeQueue) Queue(_ context.Context, ns string, limit int) ([]*models.ResurfaceItem, error) {
	f.limit = limit
	return []*models.ResurfaceItem{
		{Namespace: ns, MemoryID: "m1", DueAt: jobT0, Score: 0.4, QueuedAt: jobT0.Add(time.Hour)},
		{Namespace: ns, MemoryID: "gone", DueAt: jobT0, Score: 0.3, QueuedAt: jobT0},
		{Namespace: ns, MemoryID: "retired", DueAt: jobT0, Score: 0.3, QueuedAt: jobT0},
		{Namespace: ns, MemoryID: "secret", DueAt: jobT0, Score: 0.3, QueuedAt: jobT0},
		{Namespace: ns, MemoryID: "cooling", DueAt: jobT0, Score: 0.2, QueuedAt: jobT0},
		{Namespace: ns, MemoryID: "m2", DueAt: jobT0.Add(-time.Hour), Score: 0.1, QueuedAt: jobT0},
	}, nil
}

func (f *fakeQueue) GetMemories(_ context.Context, ns string, ids []string) ([]*models.Memory, error) {
	var out []*models.Memory
	for _, id := range ids {
		if id == "gone" {
			continue
		}
		m := &models.Memory{ID: id, Namespace: ns, Kind: models.KindFact, Content: "content of " + id, CreatedAt: jobT0}
		switch id {
		case "retired":
			m.InvalidAt = time.Now().Add(-time.Minute)
		case "secret":
			m.Sensitive = true
		case "cooling":
			m.Schedule.CooldownTo = time.Now().Add(time.Hour)
		case "m2":
			m.InvalidAt = time.Now().Add(time.Hour) // retired later: listed until then
		}
		out = append(out, m)
	}
	return out, nil
}

func jobsServer(t *testing.T, sched JobScheduler, q ResurfacingQueue) *Server {
	t.Helper()
	keys, err := ParseKeys([]byte(`{"keys":[
		{"key":"sk-tenant-a-0000000","namespaces":["a"]},
		{"key":"sk-all-00000000000","namespaces":["*"]},
		{"key":"sk-admin-000000000","namespaces":["*"],"admin":true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	s, _ := newTestServer(t, Config{Keys: keys, Jobs: sched, Queue: q})
	return s
}

const adminKey = "Bearer sk-admin-000000000"

func decodeJSON(t *testing.T, body []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decoding %s: %v", body, err)
	}
}

func TestJobsRoutesNeedAnAdminKey(t *testing.T) {
	sched := &fakeScheduler{}
	s := jobsServer(t, sched, &fakeQueue{})
	for _, r := range []struct{ method, path string }{
		{"GET", "/v1/admin/jobs"}, {"GET", "/v1/admin/jobs/decay-scan/runs"}, {"POST", "/v1/admin/jobs/decay-scan/run"},
	} {
		for _, key := range []string{"Bearer sk-tenant-a-0000000", "Bearer sk-all-00000000000"} {
			res, body := do(t, s.Handler(), r.method, r.path, "", "Authorization", key)
			if res.StatusCode != 403 || errorOf(t, body).Code != "forbidden" {
				t.Errorf("%s %s with a tenant key = %d %s, want 403", r.method, r.path, res.StatusCode, body)
			}
		}
		if res, _ := do(t, s.Handler(), r.method, r.path, ""); res.StatusCode != 401 {
			t.Errorf("%s %s without a key = %d, want 401", r.method, r.path, res.StatusCode)
		}
	}
	if sched.triggers != 0 {
		t.Errorf("a refused request triggered the job %d times", sched.triggers)
	}
}

func TestListJobs(t *testing.T) {
	s := jobsServer(t, &fakeScheduler{}, nil)
	res, body := do(t, s.Handler(), "GET", "/v1/admin/jobs", "", "Authorization", adminKey)
	if res.StatusCode != 200 {
		t.Fatalf("GET /v1/admin/jobs = %d %s", res.StatusCode, body)
	}
	want := `{"jobs":[` +
		`{"name":"decay-scan","spec":"@every 1h","scheduled":true,"next_run":"2026-03-02T10:00:00Z","running":false,` +
		`"last_run":{"id":"r1","job":"decay-scan","holder":"h1","trigger":"cron","start":"2026-03-02T09:00:00Z","end":"2026-03-02T09:00:01Z","items":3,"finished":true}},` +
		`{"name":"edge-decay","spec":"@daily","scheduled":true,"next_run":"2026-03-03T00:00:00Z","running":true}]}`
	if string(body) != want {
		t.Errorf("body =\n%s\nwant\n%s", body, want)
	}
	if res, body := do(t, s.Handler(), "GET", "/v1/admin/jobs?limit=3", "", "Authorization", adminKey); res.StatusCode != 400 || errorOf(t, body).Field != "limit" {
		t.Errorf("GET /v1/admin/jobs?limit=3 = %d %s, want 400 naming limit", res.StatusCode, body)
	}
}

func TestJobRuns(t *testing.T) {
	sched := &fakeScheduler{}
	s := jobsServer(t, sched, nil)
	res, body := do(t, s.Handler(), "GET", "/v1/admin/jobs/decay-scan/runs?limit=2", "", "Authorization", adminKey)
	if res.StatusCode != 200 {
		t.Fatalf("runs = %d %s", res.StatusCode, body)
	}
	var got api.JobRunsResponse
	decodeJSON(t, body, &got)
	if len(got.Runs) != 2 || got.Runs[0].ID != "r2" || got.Runs[0].Finished || !got.Runs[0].End.IsZero() ||
		got.Runs[1].Error != "boom" || got.Runs[1].Items != 3 || sched.limit != 2 {
		t.Errorf("runs = %+v (limit passed %d)", got, sched.limit)
	}
	if strings.Contains(string(body), `"end":"0001`) {
		t.Errorf("a running run shows a zero end: %s", body)
	}
	do(t, s.Handler(), "GET", "/v1/admin/jobs/decay-scan/runs", "", "Authorization", adminKey)
	if sched.limit != 20 {
		t.Errorf("default limit = %d, want 20", sched.limit)
	}
	for path, want := range map[string]struct {
		status int
		field  string
	}{
		"/v1/admin/jobs/nope/runs":                {404, ""},
		"/v1/admin/jobs/decay-scan/runs?limit=0":  {400, "limit"},
		"/v1/admin/jobs/decay-scan/runs?limit=x":  {400, "limit"},
		"/v1/admin/jobs/decay-scan/runs?since=1d": {400, "since"},
	} {
		res, body := do(t, s.Handler(), "GET", path, "", "Authorization", adminKey)
		if e := errorOf(t, body); res.StatusCode != want.status || e.Field != want.field {
			t.Errorf("GET %s = %d %s, want %d naming %q", path, res.StatusCode, body, want.status, want.field)
		}
	}
}

func TestRunJob(t *testing.T) {
	sched := &fakeScheduler{}
	s := jobsServer(t, sched, nil)
	res, body := do(t, s.Handler(), "POST", "/v1/admin/jobs/decay-scan/run", "", "Authorization", adminKey)
	if res.StatusCode != 202 {
		t.Fatalf("run = %d %s", res.StatusCode, body)
	}
	var got api.JobRunResponse
	decodeJSON(t, body, &got)
	if got.Run.ID != "r3" || got.Run.Trigger != "manual" || got.Run.Finished || !got.Run.Start.Equal(jobT0) {
		t.Errorf("run = %+v", got.Run)
	}
	res, body = do(t, s.Handler(), "POST", "/v1/admin/jobs/decay-scan/run", "", "Authorization", adminKey)
	if res.StatusCode != 409 || errorOf(t, body).Code != "conflict" {
		t.Errorf("run while running = %d %s, want 409", res.StatusCode, body)
	}
	res, body = do(t, s.Handler(), "POST", "/v1/admin/jobs/nope/run", "", "Authorization", adminKey)
	if res.StatusCode != 404 || errorOf(t, body).Code != "not_found" {
		t.Errorf("run unknown = %d %s, want 404", res.StatusCode, body)
	}
}

func TestJobsRoutesWithoutAScheduler(t *testing.T) {
	s := jobsServer(t, nil, nil)
	for _, r := range []struct{ method, path string }{
		{"GET", "/v1/admin/jobs"}, {"GET", "/v1/admin/jobs/decay-scan/runs"}, {"POST", "/v1/admin/jobs/decay-scan/run"},
		{"GET", "/v1/namespaces/a/resurfacing"},
	} {
		res, body := do(t, s.Handler(), r.method, r.path, "", "Authorization", adminKey)
		if strings.HasPrefix(r.path, "/v1/namespaces") {
			res, body = do(t, s.Handler(), r.method, r.path, "", "Authorization", "Bearer sk-tenant-a-0000000")
		}
		if res.StatusCode != 503 || errorOf(t, body).Code != "unavailable" {
			t.Errorf("%s %s = %d %s, want 503", r.method, r.path, res.StatusCode, body)
		}
	}
}

func TestListResurfacing(t *testing.T) {
	q := &fakeQueue{}
	s := jobsServer(t, nil, q)
	res, body := do(t, s.Handler(), "GET", "/v1/namespaces/a/resurfacing", "", "Authorization", "Bearer sk-tenant-a-0000000")
	if res.StatusCode != 200 {
		t.Fatalf("resurfacing = %d %s", res.StatusCode, body)
	}
	var got api.ResurfacingResponse
	decodeJSON(t, body, &got)
	if len(got.Items) != 2 || got.Items[0].MemoryID != "m1" || got.Items[0].Memory.Content != "content of m1" ||
		got.Items[0].Score != 0.4 || !got.Items[0].QueuedAt.Equal(jobT0.Add(time.Hour)) || got.Items[1].MemoryID != "m2" ||
		got.Items[1].Memory.Namespace != "a" || q.limit != 100 {
		t.Errorf("items = %+v (limit %d)", got.Items, q.limit)
	}
	do(t, s.Handler(), "GET", "/v1/namespaces/a/resurfacing?limit=7", "", "Authorization", "Bearer sk-tenant-a-0000000")
	if q.limit != 7 {
		t.Errorf("limit passed = %d, want 7", q.limit)
	}
	res, body = do(t, s.Handler(), "GET", "/v1/namespaces/b/resurfacing", "", "Authorization", "Bearer sk-tenant-a-0000000")
	if res.StatusCode != 403 {
		t.Errorf("another tenant's queue = %d %s, want 403", res.StatusCode, body)
	}
	res, body = do(t, s.Handler(), "GET", "/v1/namespaces/a/resurfacing?limit=1001", "", "Authorization", "Bearer sk-tenant-a-0000000")
	if res.StatusCode != 400 || errorOf(t, body).Field != "limit" {
		t.Errorf("limit 1001 = %d %s", res.StatusCode, body)
	}
}

func TestParseLimitQuery(t *testing.T) {
	for _, tt := range []struct {
		query    string
		def, max int
		want     int
		field    string
	}{
		{"", 20, 1000, 20, ""},
		{"limit=1", 20, 1000, 1, ""},
		{"limit=1000", 20, 1000, 1000, ""},
		{"limit=1001", 20, 1000, 0, "limit"},
		{"limit=0", 20, 1000, 0, "limit"},
		{"limit=-3", 20, 1000, 0, "limit"},
		{"limit=2.5", 20, 1000, 0, "limit"},
		{"limit=", 20, 1000, 0, "limit"},
		{"limit=1&limit=2", 20, 1000, 0, "limit"},
		{"limt=5", 20, 1000, 0, "limt"},
		{"", 0, 0, 0, ""},
		{"limit=5", 0, 0, 0, "limit"},
	} {
		q, err := url.ParseQuery(tt.query)
		if err != nil {
			t.Fatal(err)
		}
		got, err := parseLimitQuery(q, tt.def, tt.max)
		if got != tt.want || models.ErrorField(err) != tt.field || (tt.field != "" && models.ErrorCode(err) != models.EINVALID) {
			t.Errorf("%q: %d, %v; want %d naming %q", tt.query, got, err, tt.want, tt.field)
		}
	}
}

func FuzzParseLimitQuery(f *testing.F) {
	for _, s := range []string{"", "limit=5", "limit=0", "limit=1000", "limit=1001", "limit=-1", "limit=abc", "limit=1&limit=2",
		"limit=99999999999999999999", "x=1", "limit=%00", "limit=+5", "limit=0x10"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return // net/http hands handlers only what parses
		}
		n, err := parseLimitQuery(q, defaultQueueLimit, maxQueueLimit)
		checkClientError(t, err)
		if err == nil && (n < 1 || n > maxQueueLimit) {
			t.Fatalf("limit %d out of range from %q", n, raw)
		}
	})
}
