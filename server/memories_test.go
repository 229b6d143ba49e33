package server

import (
	"net/url"
	"reflect"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
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
