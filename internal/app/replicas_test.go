package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/internal/testserver"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/store/neo4j"
)

// TestNeo4jReplicas runs two `salience serve` processes on one Neo4j, as replicas behind a
// load balancer would: a memory ingested through one is recalled through the other at
// once; engagement reported to both (each event to both, as a client retrying against
// another replica would) converges with exact counts; each job runs once per tick across
// both; and when the lease holder dies, the other takes over after the lease's TTL.
//
// It needs SALIENCE_NEO4J_URI (make test-neo4j) and deletes everything in that database.
func TestNeo4jReplicas(t *testing.T) {
	uri := os.Getenv("SALIENCE_NEO4J_URI")
	if uri == "" {
		t.Skip("Neo4j replica test skipped: SALIENCE_NEO4J_URI is not set; run `make test-neo4j`")
	}
	bin := binary(t)
	wipeNeo4j(t, uri)
	st, err := neo4j.Open(context.Background(), neo4j.Options{URI: uri})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	const ttl = 3 * time.Second
	flags := []string{"--store", "neo4j", "--neo4j-uri", uri, "--schedule-decay-scan", "@every 1s", "--lease-ttl", ttl.String()}
	a := startReplica(t, bin, flags...)
	// b reads settings on every recall (--settings-ttl 0): it must apply a change made on a
	// at once; a keeps the default 10 s cache.
	b := startReplica(t, bin, append(slices.Clone(flags), "--settings-ttl", "0")...)
	start := time.Now()

	const ns = "replicas"
	// Ingest on a, recall on b at once.
	var created api.CreateMemoriesResponse
	a.post(t, "/v1/namespaces/"+ns+"/memories", `{"memories": [
		{"kind": "fact", "content": "The lighthouse keeper on Skerry Island feeds the gulls at dawn."},
		{"kind": "fact", "content": "Marta bakes rye bread with caraway every Sunday."}]}`, http.StatusCreated, &created)
	if len(created.Memories) != 2 {
		t.Fatalf("created %d memories, want 2", len(created.Memories))
	}
	lighthouse := created.Memories[0].ID
	recallOn := func(p *replica, conv string) api.RecallResponse {
		var out api.RecallResponse
		p.post(t, "/v1/namespaces/"+ns+"/recall", fmt.Sprintf(`{"conversation_id": %q, "mode": "search", "query": "who feeds the gulls at the lighthouse?"}`, conv), http.StatusOK, &out)
		return out
	}
	got := recallOn(b, "c-0")
	if len(got.Results) == 0 || got.Results[0].ID != lighthouse {
		t.Fatalf("recall on the other replica = %v, want %s first", resultIDs(got.Results), lighthouse)
	}

	// Settings written on a are stored in Neo4j: a reads them back at once, and b, which
	// caches nothing (--settings-ttl 0), ranks under them on its next recall, without a
	// restart. Two memories match the query
	// alike, one old and important, one new and minor (as in client's
	// TestAffinityWeightsRankAsTheySay): search weights on importance alone put the old one
	// first, on freshness alone the new one, so b's order flips once it sees the second
	// write. (Another namespace: recalls here would count surfacings of the memories above.)
	const setNS = "replicas-settings"
	now := time.Now().UTC()
	pairBody, err := json.Marshal(api.CreateMemoriesRequest{Memories: []api.MemoryInput{
		{Kind: "fact", Content: "The lighthouse keeper painted the lighthouse door red.", Importance: 0.9, CreatedAt: now.Add(-90 * 24 * time.Hour)},
		{Kind: "fact", Content: "The lighthouse keeper painted the lighthouse door blue.", Importance: 0.1, CreatedAt: now.Add(-time.Hour)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var pair api.CreateMemoriesResponse
	a.post(t, "/v1/namespaces/"+setNS+"/memories", string(pairBody), http.StatusCreated, &pair)
	if len(pair.Memories) != 2 {
		t.Fatalf("created %d memories in %s, want 2", len(pair.Memories), setNS)
	}
	oldID, newID := pair.Memories[0].ID, pair.Memories[1].ID
	// patchOnA writes the search weights on a and checks a reads back the version made.
	patchOnA := func(body string, version int) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPatch, a.base+"/v1/namespaces/"+setNS+"/settings", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		res, err := a.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("PATCH settings %s on a = %d", body, res.StatusCode)
		}
		var set api.Settings
		a.get(t, "/v1/namespaces/"+setNS+"/settings", &set)
		if set.Version != version || set.Weights["search"] == (api.ScoreWeights{}) {
			t.Fatalf("settings read back on a = %+v, want version %d with search weights", set, version)
		}
	}
	// rankedOnB recalls on b, which reads the settings on every recall (--settings-ttl 0), and
	// returns the order; the recall must already rank under the version just written.
	rankedOnB := func(version int) []string {
		t.Helper()
		var out api.RecallResponse
		b.post(t, "/v1/namespaces/"+setNS+"/recall", `{"mode": "search", "query": "lighthouse door painted", "limit": 2}`, http.StatusOK, &out)
		if out.SettingsVersion != version {
			t.Fatalf("b ranks under settings version %d right after the write on a, want %d (--settings-ttl 0)", out.SettingsVersion, version)
		}
		return resultIDs(out.Results)
	}
	patchOnA(`{"weights": {"search": {"importance": 1}}}`, 1)
	if got := rankedOnB(1); len(got) != 2 || got[0] != oldID || got[1] != newID {
		t.Fatalf("b under importance weights = %v, want [%s %s] (the old, important one first)", got, oldID, newID)
	}
	// A merge patch merges the weights key by key: importance is zeroed explicitly.
	patchOnA(`{"weights": {"search": {"importance": 0, "freshness": 1}}}`, 2)
	if got := rankedOnB(2); len(got) != 2 || got[0] != newID || got[1] != oldID {
		t.Fatalf("b under freshness weights = %v, want the order flipped: [%s %s]", got, newID, oldID)
	}

	// Engagement: turns alternate between the replicas; every used event goes to both
	// replicas at once, so one of each pair is a duplicate.
	const turns = 8
	var surfacings []string
	for i := range turns {
		p := []*replica{a, b}[i%2]
		r := recallOn(p, fmt.Sprintf("c-%d", i+1))
		if len(r.Results) == 0 || r.Results[0].ID != lighthouse {
			t.Fatalf("turn %d recalled %v", i, resultIDs(r.Results))
		}
		surfacings = append(surfacings, r.Results[0].SurfacingID)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	status := map[string]int{}
	for i, sid := range surfacings {
		body := fmt.Sprintf(`{"events": [{"id": "used-%d", "surfacing_id": %q, "type": "used"}]}`, i, sid)
		for _, p := range []*replica{a, b} {
			wg.Go(func() {
				var out api.EngagementResponse
				p.post(t, "/v1/namespaces/"+ns+"/engagement", body, http.StatusOK, &out)
				mu.Lock()
				defer mu.Unlock()
				for _, r := range out.Results {
					status[r.Status]++
				}
			})
		}
	}
	wg.Wait()
	if status["applied"] != turns || status["duplicate"] != turns {
		t.Fatalf("event results %v, want %d applied and %d duplicates", status, turns, turns)
	}
	for _, p := range []*replica{a, b} {
		var m api.Memory
		p.get(t, "/v1/namespaces/"+ns+"/memories/"+lighthouse, &m)
		// One surfacing by the first recall plus one per turn; one use per distinct event.
		if m.UsageCount != turns || m.SurfaceCount != turns+1 {
			t.Fatalf("memory on %s: usage %d, surfaced %d; want %d and %d", p.base, m.UsageCount, m.SurfaceCount, turns, turns+1)
		}
	}

	// Jobs: decay-scan ticks every second on both; the lease lets one run each tick, so
	// there are no more runs than ticks, all by one holder.
	time.Sleep(5 * time.Second)
	runs := jobRunsSince(t, st, start)
	ticks := int(time.Since(start)/time.Second) + 1
	if len(runs) < 3 || len(runs) > ticks {
		t.Fatalf("%d decay-scan runs in %d ticks, want one a tick (at least 3)", len(runs), ticks)
	}
	holder := runs[0].Holder
	for i, r := range runs {
		if r.Holder != holder {
			t.Fatalf("run %d by %s, earlier ones by %s: both replicas ran the job", i, r.Holder, holder)
		}
	}

	// Kill the holder; the other replica takes the lease once it expires.
	dead, alive := a, b
	if strings.Contains(holder, fmt.Sprintf("-%d-", b.cmd.Process.Pid)) {
		dead, alive = b, a
	}
	if !strings.Contains(holder, fmt.Sprintf("-%d-", dead.cmd.Process.Pid)) {
		t.Fatalf("holder %s is neither replica (pids %d, %d)", holder, a.cmd.Process.Pid, b.cmd.Process.Pid)
	}
	if err := dead.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	dead.cmd.Wait()
	killed := time.Now()
	time.Sleep(ttl + 3*time.Second)
	after := jobRunsSince(t, st, killed)
	if len(after) == 0 {
		t.Fatalf("no decay-scan run in %v after the holder died", ttl+3*time.Second)
	}
	livePID := fmt.Sprintf("-%d-", alive.cmd.Process.Pid)
	for _, r := range after {
		if !strings.Contains(r.Holder, livePID) {
			t.Fatalf("after the kill a run by %s, want the live replica (%s)", r.Holder, livePID)
		}
	}
	// The lease runs from the dead holder's last take of it (about its last run's start), not
	// from the kill, which may come up to a tick later.
	var lastDead time.Time
	for _, r := range jobRunsSince(t, st, start) {
		if r.Holder == holder && r.Start.After(lastDead) {
			lastDead = r.Start
		}
	}
	if gap := after[0].Start.Sub(lastDead); gap < ttl-500*time.Millisecond {
		t.Fatalf("the live replica ran %v after the dead holder's last run, before the %v lease could expire", gap, ttl)
	}
	// The live replica still serves everything.
	got = recallOn(alive, "c-after")
	if len(got.Results) == 0 || got.Results[0].ID != lighthouse {
		t.Fatalf("recall after the kill = %v", resultIDs(got.Results))
	}
}

// jobRunsSince returns decay-scan's runs that started after t0, oldest first.
func jobRunsSince(t *testing.T, st *neo4j.Store, t0 time.Time) []*models.JobRun {
	t.Helper()
	rs, err := st.FindJobRuns(context.Background(), "decay-scan", 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []*models.JobRun
	for i := len(rs) - 1; i >= 0; i-- {
		if rs[i].Start.After(t0) {
			out = append(out, rs[i])
		}
	}
	return out
}

// wipeNeo4j deletes everything in the test database.
func wipeNeo4j(t *testing.T, uri string) {
	t.Helper()
	ctx := context.Background()
	d, err := driver.NewDriverWithContext(uri, driver.NoAuth())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(ctx)
	if _, err := driver.ExecuteQuery(ctx, d, `MATCH (n) DETACH DELETE n`, nil, driver.EagerResultTransformer); err != nil {
		t.Fatal(err)
	}
}

// replica is a running `salience serve` process. Its hc validates every exchange against
// openapi.yaml (testserver.Validator).
type replica struct {
	*process
	hc *http.Client
}

func startReplica(t *testing.T, bin string, flags ...string) *replica {
	t.Helper()
	p := startServe(t, bin, 60*time.Second, append([]string{"--data", t.TempDir()}, flags...)...)
	return &replica{process: p, hc: &http.Client{Transport: testserver.NewValidator(t, nil)}}
}

func (p *replica) post(t *testing.T, path, body string, want int, out any) {
	t.Helper()
	res, err := p.hc.Post(p.base+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Error(err)
		return
	}
	defer res.Body.Close()
	if res.StatusCode != want {
		b, _ := io.ReadAll(res.Body)
		t.Errorf("POST %s = %d %s, want %d", path, res.StatusCode, b, want)
		return
	}
	if err := json.NewDecoder(res.Body).Decode(out); err != nil {
		t.Error(err)
	}
}

func (p *replica) get(t *testing.T, path string, out any) {
	t.Helper()
	res, err := p.hc.Get(p.base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d", path, res.StatusCode)
	}
	if err := json.NewDecoder(res.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
}
