package server

import (
	"encoding/json"
	"fmt"
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
		// What encoding/json accepts silently: the last of duplicate keys wins, invalid UTF-8
		// and lone surrogates become U+FFFD, an explicit zero time reads as "not given".
		{"duplicate key", `{"kind":"fact","kind":"turn","content":"x"}`, "kind", "kind is given more than once"},
		{"duplicate key differing in case", `{"kind":"fact","Kind":"turn","content":"x"}`, "Kind", "given more than once"},
		{"duplicate nested key", `{"kind":"fact","content":"x","source":{"speaker":"a","speaker":"b"}}`, "source.speaker", "given more than once"},
		{"duplicate escaped key", `{"kind":"fact","k\u0069nd":"turn","content":"x"}`, "kind", "given more than once"},
		{"invalid UTF-8 in content", "{\"kind\":\"fact\",\"content\":\"caf\xe9\"}", "content", "content is not valid UTF-8 (byte offset 29)"},
		{"invalid UTF-8 in a list", "{\"kind\":\"fact\",\"content\":\"x\",\"domains\":[\"ok\",\"\xff\"]}", "domains[1]", "not valid UTF-8"},
		{"lone high surrogate", `{"kind":"fact","content":"a\ud800b"}`, "content", "lone UTF-16 surrogate"},
		{"lone low surrogate", `{"kind":"fact","content":"\udc00"}`, "content", "lone UTF-16 surrogate"},
		{"high surrogate at the end", `{"kind":"fact","content":"\ud83d"}`, "content", "lone UTF-16 surrogate"},
		{"zero time", `{"kind":"fact","content":"x","created_at":"0001-01-01T00:00:00Z"}`, "created_at", "the zero time"},
		{"zero time with an offset", `{"kind":"fact","content":"x","valid_at":"0000-12-31T23:00:00-01:00"}`, "valid_at", "the zero time"},
		// A null array element would decode as the zero value ("" here).
		{"null in a list", `{"kind":"fact","content":"x","domains":["a",null]}`, "domains[1]", "domains[1] must be a string, not null"},
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

// TestDecodeStrictAcceptsWhatItShould: the raw checks reject nothing valid.
func TestDecodeStrictAcceptsWhatItShould(t *testing.T) {
	for _, body := range []string{
		`{"kind":"fact","content":"caf\u00e9 \ud83d\ude00 \"quoted\" \\ back","source":{"speaker":"kind"}}`,
		`{"kind":"fact","content":"café 😀","domains":["kind","Kind"],"triple":{"subject":"a","predicate":"b","object":"c"}}`,
		`{"kind":"fact","content":"x","created_at":"0001-01-01T00:00:01Z","valid_at":null}`,
		`{"kind":"fact","content":"0001-01-01T00:00:00Z is the zero time"}`,
		` {"kind" : "fact" , "content" : "x" , "domains" : [ ] , "source" : { } } `,
		`{"kind":"fact","content":"null","domains":null,"source":null,"valid_at":null}`,
	} {
		var in api.MemoryInput
		if err := decodeStrict([]byte(body), &in); err != nil {
			t.Errorf("decodeStrict(%s) = %v, want nil", body, err)
		}
	}
	var in api.MemoryInput
	if err := decodeStrict([]byte(`{"kind":"fact","content":"caf\u00e9 \ud83d\ude00"}`), &in); err != nil || in.Content != "café 😀" {
		t.Errorf("content = %q, %v", in.Content, err)
	}
}

// TestDuplicateKeysInLargeObject: past maxLinearKeys keys, duplicates are found by map.
func TestDuplicateKeysInLargeObject(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"memories":[{"kind":"fact","content":"x"}],"source":{`)
	for i := range 40 {
		fmt.Fprintf(&b, `"k%d":1,`, i)
	}
	b.WriteString(`"K7":2}}`)
	err := checkRaw([]byte(b.String()))
	if models.ErrorField(err) != "source.K7" {
		t.Errorf("err = %v, want one naming source.K7", err)
	}
	if err := checkRaw([]byte(strings.Replace(b.String(), `"K7"`, `"k40"`, 1))); err != nil {
		t.Errorf("no duplicates: %v", err)
	}
	// A key no struct has is an unknown field to the decoder; checkRaw still names its object.
	err = checkRaw([]byte("{\"source\":{\"\xc3\":1}}"))
	if models.ErrorField(err) != "source" || !strings.Contains(models.ErrorMessage(err), "a key of source is not valid UTF-8") {
		t.Errorf("invalid key: err = %v", err)
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
		{"batch item duplicate key", `{"memories":[{"kind":"fact","content":"a"},{"kind":"turn","content":"b","content":"c"}]}`, 0, true, "memories[1].content"},
		{"batch item zero time", `{"memories":[{"kind":"fact","content":"a"},{"kind":"turn","content":"b","created_at":"0001-01-01T00:00:00Z"}]}`, 0, true, "memories[1].created_at"},
		{"duplicate batch key", `{"memories":[{"kind":"fact","content":"a"}],"memories":[{"kind":"fact","content":"b"}]}`, 0, true, "memories"},
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
		"source":{"conversation_id":"c1","message_id":"m1","speaker":"ada","role":"assistant"},"importance":0.8,
		"domains":["work"],"triggers":["lab"],"concepts":["Ada"],
		"triple":{"subject":"Ada","predicate":"founded","object":"the lab"},"sensitive":true}`
	ms, _, err := decodeMemories([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	m := ms[0]
	if m.Kind != models.KindFact || m.Content != "Ada founded the lab" || m.CreatedAt.Year() != 2024 ||
		m.ValidAt.Year() != 2023 || m.InvalidAt.Year() != 2025 ||
		m.Source != (models.Source{ConversationID: "c1", MessageID: "m1", Speaker: "ada", Role: models.RoleAssistant}) ||
		m.Importance != 0.8 || m.Domains[0] != "work" || m.Triggers[0] != "lab" || m.Concepts[0] != "Ada" ||
		*m.Triple != (models.Triple{Subject: "Ada", Predicate: "founded", Object: "the lab"}) || !m.Sensitive {
		t.Errorf("mapped %+v", m)
	}
}

// TestRecallConversationType: the type is a closed set; anything else is a 400 naming the
// field (it used to be accepted and become a metrics key, 15,000 characters or control
// characters included).
func TestRecallConversationType(t *testing.T) {
	for _, ct := range []string{"", "debugging", "help-seeking", "exploration", "casual", "other"} {
		body := fmt.Sprintf(`{"query":"x","conversation_type":%q}`, ct)
		req, err := decodeRecallBody([]byte(body), "ns")
		if err != nil || req.ConversationType != ct {
			t.Errorf("conversation_type %q: %v", ct, err)
		}
	}
	for _, ct := range []string{"Debugging", "chit-chat", "casual\u0001", " other", strings.Repeat("x", 15000)} {
		q, _ := json.Marshal(ct)
		body := fmt.Sprintf(`{"query":"x","conversation_type":%s}`, q)
		_, err := decodeRecallBody([]byte(body), "ns")
		if models.ErrorCode(err) != models.EINVALID || models.ErrorField(err) != "conversation_type" {
			t.Errorf("conversation_type %.20q: err = %v, want invalid naming conversation_type", ct, err)
		}
		if len(models.ErrorMessage(err)) > 300 {
			t.Errorf("conversation_type %.20q: the message echoes it whole (%d bytes)", ct, len(models.ErrorMessage(err)))
		}
	}
}

// TestRecallLimitZero: a written limit of 0 is a 400 naming limit, as the listing routes'
// limit=0 is (issue 39: it was taken as the default); absent or null is the default.
func TestRecallLimitZero(t *testing.T) {
	for body, wantErr := range map[string]bool{
		`{"query":"x","limit":0}`:    true,
		`{"query":"x","LIMIT":0}`:    true, // encoding/json matches keys ignoring case
		`{"query":"x","limit":-0}`:   true,
		`{"query":"x"}`:              false,
		`{"query":"x","limit":null}`: false,
		`{"query":"x","limit":7}`:    false,
		`{"query":"x","messages":[{"speaker":"limit","content":"limit 0"}]}`: false,
	} {
		_, err := decodeRecallBody([]byte(body), "ns")
		if wantErr && (models.ErrorCode(err) != models.EINVALID || models.ErrorField(err) != "limit") {
			t.Errorf("%s: %v, want invalid naming limit", body, err)
		}
		if !wantErr && err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
}
