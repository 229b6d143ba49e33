package server

import (
	"strings"
	"testing"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/models"
)

func TestDecodeStrictNamesTheField(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		wantField string
		wantMsg   string // a substring of the message
	}{
		{"empty body", "", "", "request body is empty"},
		{"white space only", " \n\t", "", "request body is empty"},
		{"syntax error", `{"kind":"fact",}`, "", "malformed JSON at byte offset 16"},
		{"truncated", `{"kind":`, "", "ends before the JSON value does"},
		{"two values", `{"kind":"fact","content":"x"} {}`, "", "exactly one JSON value"},
		{"trailing garbage", `{"kind":"fact","content":"x"}x`, "", "exactly one JSON value"},
		{"not an object", `[1,2]`, "", "the body must be an object, not an array"},
		{"unknown field", `{"kind":"fact","contnt":"x"}`, "contnt", `unknown field "contnt"`},
		{"unknown nested field", `{"kind":"fact","content":"x","source":{"speakr":"a"}}`, "source.speakr", `unknown field "speakr"`},
		{"wrong type", `{"kind":"fact","content":42}`, "content", "content must be a string, not the number 42"},
		{"wrong nested type", `{"kind":"fact","content":"x","triple":{"subject":1}}`, "triple.subject", "must be a string"},
		{"wrong element type", `{"kind":"fact","content":"x","domains":["a",2]}`, "domains[1]", "domains[1] must be a string, not the number 2"},
		{"array for string", `{"kind":["fact"],"content":"x"}`, "kind", "kind must be a string, not an array"},
		{"bool for number", `{"kind":"fact","content":"x","importance":true}`, "importance", "importance must be a number, not a boolean"},
		{"bad time", `{"kind":"fact","content":"x","created_at":"yesterday"}`, "created_at", "created_at must be an RFC 3339 time"},
		{"number for time", `{"kind":"fact","content":"x","valid_at":5}`, "valid_at", "valid_at must be an RFC 3339 time"},
		{"object for list", `{"kind":"fact","content":"x","triggers":{}}`, "triggers", "triggers must be an array, not an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in api.MemoryInput
			err := decodeStrict([]byte(tt.body), &in)
			if got := models.ErrorCode(err); got != models.EINVALID {
				t.Fatalf("code = %q (%v), want invalid", got, err)
			}
			if got := models.ErrorField(err); got != tt.wantField {
				t.Errorf("field = %q, want %q (%v)", got, tt.wantField, err)
			}
			if got := models.ErrorMessage(err); !strings.Contains(got, tt.wantMsg) {
				t.Errorf("message = %q, want it to contain %q", got, tt.wantMsg)
			}
		})
	}
}

func TestDecodeStrictAcceptsOneValue(t *testing.T) {
	var in api.MemoryInput
	body := ` {"kind":"fact","content":"Nadia keeps bees","created_at":"2024-05-01T14:30:00Z","domains":["bees"],"source":{"speaker":"nadia"}} ` + "\n"
	if err := decodeStrict([]byte(body), &in); err != nil {
		t.Fatal(err)
	}
	if in.Kind != "fact" || in.Content != "Nadia keeps bees" || in.CreatedAt.Year() != 2024 || in.Domains[0] != "bees" || in.Source.Speaker != "nadia" {
		t.Errorf("decoded %+v", in)
	}
}

func TestDecodeMemoriesBatch(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		wantN     int
		wantBatch bool
		wantField string // when an error is expected
	}{
		{"single", `{"kind":"fact","content":"a"}`, 1, false, ""},
		{"batch", `{"memories":[{"kind":"fact","content":"a"},{"kind":"turn","content":"b"}]}`, 2, true, ""},
		{"batch item unknown field", `{"memories":[{"kind":"fact","content":"a"},{"kind":"turn","text":"b"}]}`, 0, true, "memories[1].text"},
		{"batch item wrong type", `{"memories":[{"kind":"fact","content":"a"},{"kind":"turn","content":"b","importance":"high"}]}`, 0, true, "memories[1].importance"},
		{"batch item bad time", `{"memories":[{"kind":"fact","content":"a","valid_at":"2024-13-01"}]}`, 0, true, "memories[0].valid_at"},
		{"batch with extra key", `{"memories":[{"kind":"fact","content":"a"}],"kind":"fact"}`, 0, true, "kind"},
		{"empty batch", `{"memories":[]}`, 0, true, "memories"},
		{"null batch", `{"memories":null}`, 0, true, "memories"},
		{"batch not an array", `{"memories":{"kind":"fact"}}`, 0, true, "memories"},
		{"too many", `{"memories":[` + strings.Repeat(`{"kind":"fact","content":"a"},`, models.MaxBatch) + `{"kind":"fact","content":"a"}]}`, 0, true, "memories"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, batch, err := decodeMemories([]byte(tt.body))
			if batch != tt.wantBatch {
				t.Errorf("batch = %v, want %v", batch, tt.wantBatch)
			}
			if tt.wantN == 0 {
				if models.ErrorCode(err) != models.EINVALID || models.ErrorField(err) != tt.wantField {
					t.Fatalf("err = %v (field %q), want invalid naming %q", err, models.ErrorField(err), tt.wantField)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(ms) != tt.wantN {
				t.Fatalf("got %d memories, want %d", len(ms), tt.wantN)
			}
		})
	}
}

func TestDecodeMemoriesMapsEveryField(t *testing.T) {
	body := `{"kind":"fact","content":"Ada founded the lab","created_at":"2024-01-02T03:04:05Z",
		"valid_at":"2023-01-01T00:00:00Z","invalid_at":"2025-01-01T00:00:00Z",
		"source":{"conversation_id":"c1","message_id":"m1","speaker":"ada"},"importance":0.8,
		"domains":["work"],"triggers":["lab"],"concepts":["Ada"],
		"triple":{"subject":"Ada","predicate":"founded","object":"the lab"},"sensitive":true}`
	ms, _, err := decodeMemories([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	m := ms[0]
	if m.Kind != models.KindFact || m.Content != "Ada founded the lab" || m.CreatedAt.Year() != 2024 ||
		m.ValidAt.Year() != 2023 || m.InvalidAt.Year() != 2025 ||
		m.Source != (models.Source{ConversationID: "c1", MessageID: "m1", Speaker: "ada"}) ||
		m.Importance != 0.8 || m.Domains[0] != "work" || m.Triggers[0] != "lab" || m.Concepts[0] != "Ada" ||
		*m.Triple != (models.Triple{Subject: "Ada", Predicate: "founded", Object: "the lab"}) || !m.Sensitive {
		t.Errorf("mapped %+v", m)
	}
}
