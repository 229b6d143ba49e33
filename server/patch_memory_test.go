package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/api"
)

// TestPatchMemory: a merge patch changes importance, validity and sensitivity, null resets
// a field, a chunk's id edits its memory, and bad patches are 400s naming the field that
// write nothing.
func TestPatchMemory(t *testing.T) {
	s, st := ingestStack(t)
	h := s.Handler()
	long := strings.Repeat("The harbour master kept a ledger of every ship that docked. ", 30)
	res, body := do(t, h, "POST", "/v1/namespaces/a/memories", `{"memories":[
		{"kind":"document","content":"`+long+`","importance":0.4,"valid_at":"2020-01-01T00:00:00Z"},
		{"kind":"fact","content":"Other memory.","importance":0.4}]}`)
	if res.StatusCode != 201 {
		t.Fatalf("create: %d %s", res.StatusCode, body)
	}
	var created api.CreateMemoriesResponse
	if err := json.Unmarshal(body, &created); err != nil {
		t.Fatal(err)
	}
	doc, other := created.Memories[0], created.Memories[1]
	if doc.ChunkCount < 2 {
		t.Fatalf("not chunked: %d", doc.ChunkCount)
	}
	path := "/v1/namespaces/a/memories/" + doc.ID
	patch := func(t *testing.T, p, body string) (int, api.Memory, []byte) {
		t.Helper()
		res, b := do(t, h, "PATCH", p, body)
		var m api.Memory
		if res.StatusCode == 200 {
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
		}
		return res.StatusCode, m, b
	}

	status, m, b := patch(t, path+"-1", `{"importance":0.9,"invalid_at":"2026-02-01T10:00:00+02:00","sensitive":true}`)
	if status != 200 || m.ID != doc.ID || m.Importance != 0.9 || !m.InvalidAt.Equal(time.Date(2026, 2, 1, 8, 0, 0, 0, time.UTC)) ||
		!m.Sensitive || !m.ValidAt.Equal(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)) || m.Content != long {
		t.Fatalf("patch through a chunk's id = %d %s", status, b)
	}
	for i := range doc.ChunkCount {
		c, err := st.GetMemory(context.Background(), "a", doc.ID+"-"+string(rune('0'+i)))
		if err != nil || c.Importance != 0.9 || !c.Sensitive || c.InvalidAt.IsZero() {
			t.Fatalf("chunk %d not edited: %+v, %v", i, c, err)
		}
	}
	// null resets; what is left out stays.
	status, m, b = patch(t, path, `{"valid_at":null,"invalid_at":null}`)
	if status != 200 || !m.ValidAt.IsZero() || !m.InvalidAt.IsZero() || m.Importance != 0.9 || !m.Sensitive {
		t.Fatalf("patch with nulls = %d %s", status, b)
	}
	status, m, b = patch(t, path, `{}`)
	if status != 200 || m.Importance != 0.9 {
		t.Fatalf("empty patch = %d %s", status, b)
	}

	for _, tc := range []struct {
		name, path, body string
		status           int
		field            string
	}{
		{"content", path, `{"content":"new text"}`, 400, "content"},
		{"kind", path, `{"importance":0.5,"kind":"fact"}`, 400, "kind"},
		{"unknown", path, `{"colour":"red"}`, 400, "colour"},
		{"case-folded name", path, `{"Importance":0.5}`, 400, "Importance"},
		{"importance over 1", path, `{"importance":1.5}`, 400, "importance"},
		{"importance a string", path, `{"importance":"high"}`, 400, "importance"},
		{"zero time", path, `{"invalid_at":"0001-01-01T00:00:00Z"}`, 400, "invalid_at"},
		{"not a time", path, `{"valid_at":"yesterday"}`, 400, "valid_at"},
		{"invalid before valid", path, `{"valid_at":"2026-01-01T00:00:00Z","invalid_at":"2025-01-01T00:00:00Z"}`, 400, "invalid_at"},
		{"out of range", path, `{"valid_at":"1500-01-01T00:00:00Z"}`, 400, "valid_at"},
		{"array", path, `[]`, 400, ""},
		{"null body", path, `null`, 400, ""},
		{"malformed", path, `{"importance":`, 400, ""},
		{"missing", "/v1/namespaces/a/memories/01JZZZZZZZZZZZZZZZZZZZZZZZ", `{"importance":0.5}`, 404, ""},
		{"bad id", "/v1/namespaces/a/memories/%20x", `{"importance":0.5}`, 400, "id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, _, b := patch(t, tc.path, tc.body)
			if status != tc.status {
				t.Fatalf("status = %d %s, want %d", status, b, tc.status)
			}
			if e := errorOf(t, b); tc.status == 400 && e.Field != tc.field {
				t.Errorf("error = %+v, want it to name %q", e, tc.field)
			}
		})
	}
	// A field of a memory that cannot change says so; a field no memory has is unknown.
	if _, _, b := patch(t, path, `{"content":"new text"}`); !strings.Contains(errorOf(t, b).Message, "cannot be changed") {
		t.Errorf("content: %s, want it to say it cannot be changed", b)
	}
	if _, _, b := patch(t, path, `{"colour":"red"}`); !strings.Contains(errorOf(t, b).Message, "unknown field") {
		t.Errorf("colour: %s, want an unknown field", b)
	}

	// Nothing the refused patches held was written.
	res, b = do(t, h, "GET", path, "")
	var got api.Memory
	if err := json.Unmarshal(b, &got); err != nil || res.StatusCode != http.StatusOK {
		t.Fatal(res.StatusCode, err)
	}
	if got.Importance != 0.9 || !got.Sensitive || !got.ValidAt.IsZero() || !got.InvalidAt.IsZero() || got.Content != long || got.Kind != "document" {
		t.Errorf("after the refused patches: %s", b)
	}
	res, b = do(t, h, "GET", "/v1/namespaces/a/memories/"+other.ID, "")
	if !strings.Contains(string(b), `"importance":0.4`) {
		t.Errorf("the other memory: %d %s", res.StatusCode, b)
	}
}

// TestPatchMemoryWithoutEditor: a server whose ingester cannot edit answers 503.
func TestPatchMemoryWithoutEditor(t *testing.T) {
	s, _ := newTestServer(t, Config{})
	res, body := do(t, s.Handler(), "PATCH", "/v1/namespaces/a/memories/01JZZZZZZZZZZZZZZZZZZZZZZZ", `{"importance":0.5}`)
	if res.StatusCode != 503 {
		t.Errorf("= %d %s, want 503", res.StatusCode, body)
	}
}

// TestMemoryPatchMarshal: the client's form sends set fields and nulls for Clear.
func TestMemoryPatchMarshal(t *testing.T) {
	imp, at := 0.25, time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	b, err := json.Marshal(api.MemoryPatch{Importance: &imp, InvalidAt: &at, Clear: []string{"valid_at"}})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"importance":0.25,"invalid_at":"2026-03-01T00:00:00Z","valid_at":null}` {
		t.Errorf("= %s", b)
	}
	p, err := decodeMemoryPatch(b)
	if err != nil || *p.Importance != imp || !p.InvalidAt.Equal(at) || p.ValidAt != nil || len(p.Clear) != 1 || p.Clear[0] != "valid_at" {
		t.Errorf("decoded back: %+v, %v", p, err)
	}
}
