package sqlite_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/internal/testserver"
	"github.com/salience-ai/salience/store/sqlite"
)

// The upgrade fixture: a data directory as this code leaves it when killed with turns still
// only in its surfacing journal. server/upgrade_test.go opens it with whatever code is
// current and checks that nothing it acknowledged is lost. Rewrite it with
//
//	go test ./store/sqlite -run TestWriteUpgradeFixture -args -write-upgrade-fixture
//
// only while the journal exists: the point is a directory the journal's code wrote.

var writeFixture = flag.Bool("write-upgrade-fixture", false, "write server/testdata/upgrade-journal")

// fixtureDir is where the fixture is committed, beside the test that reads it.
const fixtureDir = "../../server/testdata/upgrade-journal"

// The manifest's shape; server/upgrade_test.go reads it with a copy of these types.
type (
	fixtureMemory struct {
		ID      string `json:"id"`
		Content string `json:"content"`
	}
	fixtureSurfacing struct {
		ID             string `json:"id"`
		MemoryID       string `json:"memory_id"`
		ConversationID string `json:"conversation_id"`
		Mode           string `json:"mode"`
		// Journaled: the turn was only in the journal, not yet in SQLite, at the crash.
		Journaled bool `json:"journaled"`
	}
	fixtureEvent struct {
		ID          string `json:"id"`
		SurfacingID string `json:"surfacing_id"`
		Type        string `json:"type"`
	}
	fixtureManifest struct {
		Namespace  string             `json:"namespace"`
		Memories   []fixtureMemory    `json:"memories"`
		Surfacings []fixtureSurfacing `json:"surfacings"`
		Events     []fixtureEvent     `json:"events"`
	}
)

func TestWriteUpgradeFixture(t *testing.T) {
	if !*writeFixture {
		t.Skip("writes the upgrade fixture only when asked: -args -write-upgrade-fixture")
	}
	const ns = "upgrade"
	dir := t.TempDir()
	ts := testserver.Start(t, testserver.Options{DataDir: dir, Seed: 42})
	post := func(path string, in, out any, want int) {
		t.Helper()
		body, _ := json.Marshal(in)
		res, err := http.Post(ts.URL+"/v1/namespaces/"+ns+path, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != want {
			t.Fatalf("POST %s: %d, want %d: %s", path, res.StatusCode, want, b)
		}
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
	}
	var m fixtureManifest
	m.Namespace = ns
	topics := []string{
		"the heron nests by the pond at the bottom of the garden",
		"the harbour tide table says high water at six",
		"sourdough bread needs the starter fed the night before",
	}
	ingest := func(from, to int) {
		var req api.CreateMemoriesRequest
		for i := from; i < to; i++ {
			c := fmt.Sprintf("note %d: %s", i, topics[i%len(topics)])
			req.Memories = append(req.Memories, api.MemoryInput{Kind: "fact", Content: c})
		}
		var out api.CreateMemoriesResponse
		post("/memories", req, &out, http.StatusCreated)
		for i, mem := range out.Memories {
			m.Memories = append(m.Memories, fixtureMemory{ID: mem.ID, Content: req.Memories[i].Content})
		}
	}
	turn := 0
	recall := func(journaled bool) {
		conv := fmt.Sprintf("c%d", turn%3)
		req := api.RecallRequest{ConversationID: conv, TurnID: fmt.Sprintf("t%d", turn), Limit: 4}
		if turn%2 == 0 {
			req.Mode, req.Query = "search", topics[turn%len(topics)]
		} else {
			req.Mode, req.ThresholdPolicy = "ambient", "fixed:0"
			req.Messages = []api.Message{{Speaker: "user", Content: "tell me about " + topics[turn%len(topics)]}}
		}
		turn++
		var out api.RecallResponse
		post("/recall", req, &out, http.StatusOK)
		if len(out.Results) == 0 {
			t.Fatalf("recall %+v returned nothing", req)
		}
		for _, r := range out.Results {
			m.Surfacings = append(m.Surfacings, fixtureSurfacing{ID: r.SurfacingID, MemoryID: r.ID,
				ConversationID: conv, Mode: req.Mode, Journaled: journaled})
		}
	}
	types := []string{"used", "helpful", "ignored", "dismissed"}
	engage := func(surfacings []fixtureSurfacing) {
		var req api.EngagementRequest
		for _, s := range surfacings {
			n := len(m.Events) + len(req.Events)
			req.Events = append(req.Events, api.EngagementEvent{ID: fmt.Sprintf("ev-%d", n), SurfacingID: s.ID, Type: types[n%len(types)]})
		}
		var out api.EngagementResponse
		post("/engagement", req, &out, http.StatusOK)
		if out.Applied != len(req.Events) {
			t.Fatalf("engagement: %+v", out)
		}
		for _, e := range req.Events {
			m.Events = append(m.Events, fixtureEvent{ID: e.ID, SurfacingID: e.SurfacingID, Type: e.Type})
		}
	}

	// In the database file: memories, turns and events.
	ingest(0, 30)
	for range 6 {
		recall(false)
	}
	engage(m.Surfacings[:8])
	if err := sqlite.CompactForFixture(ts.Store); err != nil {
		t.Fatal(err)
	}
	// In the WAL only: memories, a turn and events.
	sqlite.HoldForFixture(ts.Store)
	ingest(30, 31)
	recall(false)
	engage(m.Surfacings[len(m.Surfacings)-1:])
	// In the journal only: turns.
	applied := len(m.Surfacings)
	for range 4 {
		recall(true)
	}
	if n := sqlite.JournalPending(ts.Store); n != 4 {
		t.Fatalf("%d turns pending in the journal, want 4", n)
	}
	t.Logf("%d memories, %d surfacings (%d journaled), %d events", len(m.Memories), len(m.Surfacings), len(m.Surfacings)-applied, len(m.Events))

	// What a kill leaves: the database, its WAL and the journal (the -shm is rebuilt).
	if err := os.RemoveAll(fixtureDir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(fixtureDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"salience.db", "salience.db-wal", "salience.db-surfacings"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) == 0 {
			t.Fatalf("%s is empty", f)
		}
		if err := os.WriteFile(filepath.Join(fixtureDir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(filepath.Join(fixtureDir, "acknowledged.json"), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}
