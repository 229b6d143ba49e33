package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/url"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/embed"
	"github.com/salience-ai/salience/ingest"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/store/sqlite"
)

func TestParseListQuery(t *testing.T) {
	since := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	until := time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		query string
		want  models.MemoryFilter
	}{
		{"", models.MemoryFilter{Limit: 100}},
		{"kind=fact&kind=turn", models.MemoryFilter{Kinds: []models.Kind{"fact", "turn"}, Limit: 100}},
		{"kind=fact,anchor", models.MemoryFilter{Kinds: []models.Kind{"fact", "anchor"}, Limit: 100}},
		{"conversation_id=c1&limit=5&offset=10", models.MemoryFilter{ConversationID: "c1", Limit: 5, Offset: 10}},
		{"since=2024-05-01T00:00:00Z&until=2024-06-01T00:00:00Z", models.MemoryFilter{Since: since, Until: until, Limit: 100}},
		{"limit=1000", models.MemoryFilter{Limit: 1000}},
	}
	for _, tt := range tests {
		q, err := url.ParseQuery(tt.query)
		if err != nil {
			t.Fatal(err)
		}
		got, err := parseListQuery(q)
		if err != nil {
			t.Errorf("%q: %v", tt.query, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q: got %+v, want %+v", tt.query, got, tt.want)
		}
	}
}

func TestParseListQueryRejects(t *testing.T) {
	tests := []struct{ query, field string }{
		{"kind=memo", "kind"},
		{"kind=", "kind"},
		{"since=yesterday", "since"},
		{"until=2024-05-01", "until"},
		{"since=2024-06-01T00:00:00Z&until=2024-05-01T00:00:00Z", "until"},
		{"limit=0", "limit"},
		{"limit=1001", "limit"},
		{"limit=ten", "limit"},
		{"limit=5&limit=6", "limit"},
		{"offset=-1", "offset"},
		{"offset=99999999999999999999", "offset"},
		{"conversation_id=", "conversation_id"},
		{"knd=fact", "knd"},
	}
	for _, tt := range tests {
		q, err := url.ParseQuery(tt.query)
		if err != nil {
			t.Fatal(err)
		}
		_, err = parseListQuery(q)
		if models.ErrorCode(err) != models.EINVALID || models.ErrorField(err) != tt.field {
			t.Errorf("%q: err = %v (field %q), want invalid naming %q", tt.query, err, models.ErrorField(err), tt.field)
		}
	}
}

// ingestStack is a server over a real store and ingest service.
func ingestStack(t *testing.T) (*Server, *sqlite.Store) {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "salience.db"), sqlite.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	s, _ := newTestServer(t, Config{Ingester: ingest.New(st, embed.NewLocal(0)), Memories: st})
	return s, st
}

// TestCreatedAtOutOfRange: dates before 1970 used to be a 500 from a panic in ids.New, for
// one memory and for a batch; dates past the store's range were named by the store's
// internal path ("writes[0].memory.created_at"); an explicit zero time was stored as now.
func TestCreatedAtOutOfRange(t *testing.T) {
	s, st := ingestStack(t)
	h := s.Handler()
	for _, tc := range []struct {
		name, body string
		status     int
		field      string
	}{
		{"1960, single", `{"kind":"document","content":"a","created_at":"1960-01-01T00:00:00Z"}`, 201, ""},
		{"1960, batch", `{"memories":[{"kind":"fact","content":"b"},{"kind":"document","content":"c","created_at":"1960-01-01T00:00:00Z"}]}`, 201, ""},
		{"1600, single", `{"kind":"fact","content":"x","created_at":"1600-01-01T00:00:00Z"}`, 400, "created_at"},
		{"2300, batch of one", `{"memories":[{"kind":"fact","content":"x","created_at":"2300-01-01T00:00:00Z"}]}`, 400, "memories[0].created_at"},
		{"2300, batch", `{"memories":[{"kind":"fact","content":"x"},{"kind":"fact","content":"y","created_at":"2300-01-01T00:00:00Z"}]}`, 400, "memories[1].created_at"},
		{"zero time", `{"kind":"fact","content":"x","created_at":"0001-01-01T00:00:00Z"}`, 400, "created_at"},
		{"zero time, batch", `{"memories":[{"kind":"fact","content":"x","created_at":"0001-01-01T00:00:00Z"}]}`, 400, "memories[0].created_at"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, body := do(t, h, "POST", "/v1/namespaces/a/memories", tc.body)
			if res.StatusCode != tc.status {
				t.Fatalf("status = %d %s, want %d", res.StatusCode, body, tc.status)
			}
			if tc.status != 201 {
				if e := errorOf(t, body); e.Code != "invalid" || e.Field != tc.field {
					t.Errorf("error = %+v, want invalid naming %q", e, tc.field)
				}
			}
		})
	}
	ms, total, err := st.FindMemories(context.Background(), models.MemoryFilter{Namespace: "a"})
	if err != nil || total != 3 {
		t.Fatalf("%d memories stored, %v; want the 3 accepted", total, err)
	}
	old := 0
	for _, m := range ms {
		if m.CreatedAt.Year() == 1960 {
			old++
		}
	}
	if old != 2 {
		t.Errorf("%d memories dated 1960, want 2", old)
	}
}

// TestSourceRole: a memory's source says whose words it holds, user or assistant; absent is
// unknown (stored and returned as no role); any other role is a 400 naming the field, and
// a batch holding one writes nothing.
func TestSourceRole(t *testing.T) {
	s, st := ingestStack(t)
	h := s.Handler()
	for _, tc := range []struct {
		name, body string
		status     int
		field      string
	}{
		{"assistant", `{"kind":"turn","content":"I set the alarm for six.","source":{"speaker":"bot","role":"assistant"}}`, 201, ""},
		{"user", `{"kind":"turn","content":"Set an alarm for six.","source":{"role":"user"}}`, 201, ""},
		{"absent", `{"kind":"turn","content":"Thanks!","source":{"speaker":"pat"}}`, 201, ""},
		{"unknown", `{"kind":"turn","content":"x","source":{"role":"narrator"}}`, 400, "source.role"},
		{"case differs", `{"kind":"turn","content":"x","source":{"role":"Assistant"}}`, 400, "source.role"},
		{"batch", `{"memories":[{"kind":"fact","content":"y"},{"kind":"turn","content":"x","source":{"role":"system"}}]}`, 400, "memories[1].source.role"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, body := do(t, h, "POST", "/v1/namespaces/a/memories", tc.body)
			if res.StatusCode != tc.status {
				t.Fatalf("status = %d %s, want %d", res.StatusCode, body, tc.status)
			}
			if tc.status != 201 {
				if e := errorOf(t, body); e.Code != "invalid" || e.Field != tc.field {
					t.Errorf("error = %+v, want invalid naming %q", e, tc.field)
				}
				return
			}
			var got api.CreateMemoriesResponse
			if err := json.Unmarshal(body, &got); err != nil || len(got.Memories) != 1 {
				t.Fatalf("response %s: %v", body, err)
			}
			m := got.Memories[0]
			want := map[string]string{"assistant": "assistant", "user": "user", "absent": ""}[tc.name]
			if m.Source == nil || m.Source.Role != want {
				t.Errorf("returned source = %+v, want role %q", m.Source, want)
			}
			stored, err := st.GetMemory(context.Background(), "a", m.ID)
			if err != nil {
				t.Fatal(err)
			}
			if string(stored.Source.Role) != want {
				t.Errorf("stored source = %+v, want role %q", stored.Source, want)
			}
		})
	}
	if _, total, err := st.FindMemories(context.Background(), models.MemoryFilter{Namespace: "a"}); err != nil || total != 3 {
		t.Errorf("%d memories stored, %v; want the 3 accepted", total, err)
	}
}
