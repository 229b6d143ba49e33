package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/internal/testserver"
)

// upgradeFixture is a data directory an earlier version of the server left when it was
// killed: memories, turns and events in the database file and in its WAL, and the last turns
// only in the surfacing journal it kept then (salience.db-surfacings). acknowledged.json
// lists what that server had acknowledged. It was written by a generator beside the journal
// (commit 16053e8, store/sqlite/upgrade_fixture_test.go), deleted with the journal; it is
// data now, kept as it was, so that every later store must read it.
const upgradeFixture = "testdata/upgrade-journal"

type upgradeManifest struct {
	Namespace string `json:"namespace"`
	Memories  []struct {
		ID      string `json:"id"`
		Content string `json:"content"`
	} `json:"memories"`
	Surfacings []struct {
		ID        string `json:"id"`
		Journaled bool   `json:"journaled"`
	} `json:"surfacings"`
	Events []struct {
		ID          string `json:"id"`
		SurfacingID string `json:"surfacing_id"`
		Type        string `json:"type"`
	} `json:"events"`
}

// TestUpgradeKeepsAcknowledgedWrites opens the fixture as the server does and checks that
// nothing the old server acknowledged is lost: every memory with its content, every event
// with its surfacing and type, and every surfacing id, journaled or not, is still accepted
// by engagement, its outcome recorded.
func TestUpgradeKeepsAcknowledgedWrites(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(upgradeFixture, "acknowledged.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want upgradeManifest
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	journaled := 0
	for _, s := range want.Surfacings {
		if s.Journaled {
			journaled++
		}
	}
	if len(want.Memories) == 0 || journaled == 0 || journaled == len(want.Surfacings) || len(want.Events) == 0 {
		t.Fatalf("the fixture lacks a case: %d memories, %d surfacings of which %d journaled, %d events",
			len(want.Memories), len(want.Surfacings), journaled, len(want.Events))
	}
	dir := t.TempDir()
	files, err := os.ReadDir(upgradeFixture)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !strings.HasPrefix(f.Name(), "salience.db") {
			continue // the manifest, .gitattributes
		}
		b, err := os.ReadFile(filepath.Join(upgradeFixture, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ts := testserver.Start(t, testserver.Options{DataDir: dir})
	base := ts.URL + "/v1/namespaces/" + want.Namespace

	for _, m := range want.Memories {
		var got api.Memory
		if code := getJSON(t, base+"/memories/"+m.ID, &got); code != http.StatusOK || got.Content != m.Content {
			t.Errorf("memory %s: %d %q, want 200 %q", m.ID, code, got.Content, m.Content)
		}
	}

	// The outcomes as they were: one per event, the rest pending.
	wantCounts := map[string]int{}
	for _, e := range want.Events {
		wantCounts[e.Type]++
	}
	before := upgradeMetrics(t, base)
	checkOutcomes(t, "before any report", before.Overall, len(want.Surfacings), wantCounts, len(want.Surfacings)-len(want.Events))
	if before.Events.Total != len(want.Events) {
		t.Errorf("events: %d, want %d", before.Events.Total, len(want.Events))
	}

	// Each event is recorded with its surfacing: sent again it is a duplicate, and its id on
	// another surfacing is a conflict.
	var again, moved api.EngagementRequest
	for i, e := range want.Events {
		again.Events = append(again.Events, api.EngagementEvent{ID: e.ID, SurfacingID: e.SurfacingID, Type: e.Type})
		other := want.Events[(i+1)%len(want.Events)].SurfacingID
		moved.Events = append(moved.Events, api.EngagementEvent{ID: e.ID, SurfacingID: other, Type: e.Type})
	}
	for i, r := range upgradeEngage(t, base, again).Results {
		if r.Status != "duplicate" {
			t.Errorf("event %s sent again: %s %+v, want duplicate", again.Events[i].ID, r.Status, r.Error)
		}
	}
	for i, r := range upgradeEngage(t, base, moved).Results {
		if r.Status != "rejected" || r.Error == nil || r.Error.Code != "conflict" {
			t.Errorf("event %s on another surfacing: %s %+v, want rejected with conflict", moved.Events[i].ID, r.Status, r.Error)
		}
	}

	// Every surfacing id is accepted: one without an outcome takes one, one with an outcome
	// keeps it (a new report is a duplicate).
	reported := map[string]bool{}
	for _, e := range want.Events {
		reported[e.SurfacingID] = true
	}
	var late api.EngagementRequest
	for i, s := range want.Surfacings {
		typ := []string{"used", "dismissed"}[i%2]
		late.Events = append(late.Events, api.EngagementEvent{ID: "late-" + s.ID, SurfacingID: s.ID, Type: typ})
		if !reported[s.ID] {
			wantCounts[typ]++
		}
	}
	for i, r := range upgradeEngage(t, base, late).Results {
		s := want.Surfacings[i]
		if wantStatus := map[bool]string{true: "duplicate", false: "applied"}[reported[s.ID]]; r.Status != wantStatus {
			t.Errorf("surfacing %s (journaled %v): %s %+v, want %s", s.ID, s.Journaled, r.Status, r.Error, wantStatus)
		}
	}
	after := upgradeMetrics(t, base)
	checkOutcomes(t, "after reporting on every surfacing", after.Overall, len(want.Surfacings), wantCounts, 0)
}

func checkOutcomes(t *testing.T, when string, got api.OutcomeCounts, surfaced int, counts map[string]int, pending int) {
	t.Helper()
	if got.Surfaced != surfaced || got.Used != counts["used"] || got.Helpful != counts["helpful"] ||
		got.Ignored != counts["ignored"] || got.Dismissed != counts["dismissed"] || got.Pending != pending {
		t.Errorf("%s: outcomes %+v, want %d surfaced, %v, %d pending", when, got, surfaced, counts, pending)
	}
}

func upgradeMetrics(t *testing.T, base string) api.MetricsResponse {
	t.Helper()
	var m api.MetricsResponse
	if code := getJSON(t, base+"/metrics", &m); code != http.StatusOK {
		t.Fatalf("metrics: %d", code)
	}
	return m
}

func upgradeEngage(t *testing.T, base string, req api.EngagementRequest) api.EngagementResponse {
	t.Helper()
	body, _ := json.Marshal(req)
	res, err := http.Post(base+"/engagement", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out api.EngagementResponse
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != http.StatusOK || len(out.Results) != len(req.Events) {
		t.Fatalf("engagement: %d %v %+v", res.StatusCode, err, out)
	}
	return out
}

func getJSON(t *testing.T, url string, out any) int {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatal(fmt.Errorf("%s: %w", url, err))
		}
	}
	return res.StatusCode
}
