package server

import (
	"encoding/json"
	"math"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/ingest"
	"github.com/salience-ai/salience/models"
)

// The fuzz targets feed arbitrary input to every request decoder. Whatever the input, a
// decoder must not panic and must answer with a client error (400 or 413), never one that
// maps to a 5xx status. Run one with: go test -run=^$ -fuzz=^FuzzDecodeMemories$ -fuzztime=30s ./server

// checkClientError fails when err would be served as anything but a 4xx.
func checkClientError(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if status := errorStatus(models.ErrorCode(err)); status < 400 || status >= 500 {
		t.Fatalf("error %v maps to status %d", err, status)
	}
	if models.ErrorMessage(err) == "" {
		t.Fatalf("error %v has no message", err)
	}
}

func FuzzDecodeMemories(f *testing.F) {
	for _, s := range []string{
		`{"kind":"fact","content":"Nadia keeps her bees on the roof of the old cannery."}`,
		`{"memories":[{"kind":"turn","content":"hi","source":{"conversation_id":"c1","speaker":"bob"}},{"kind":"fact","content":"x","triple":{"subject":"a","predicate":"b","object":"c"}}]}`,
		`{"kind":"fact","content":"x","created_at":"2024-05-01T14:30:00Z","valid_at":"2024-05-01T00:00:00+02:00","invalid_at":"2025-01-01T00:00:00Z"}`,
		`{"kind":"fact","content":"x","importance":0.5,"domains":["a"],"triggers":["b"],"concepts":["c"],"sensitive":true}`,
		`{"memories":[]}`, `{"memories":null}`, `{"memories":[null]}`, `{"memories":{"kind":"fact"}}`,
		`{"kind":"fact","content":"x","source":{"speakr":"a"}}`, `{"kind":1}`, `{"kind":"fact",}`, `[]`, `null`, `""`, ``,
		`{"kind":"fact","content":"x"} {}`, `{"Kind":"fact","CONTENT":"x"}`, `{"kind":"fact","content":"\ud800"}`,
		`{"memories":[{"kind":"fact","content":"x","created_at":"2024-13-45T99:99:99Z"}]}`,
		`{"kind":"fact","content":"x","importance":1e999}`, `{"memories":[{"memories":[]}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		ms, batch, err := decodeMemories(body)
		checkClientError(t, err)
		if err != nil {
			return
		}
		if len(ms) < 1 || len(ms) > models.MaxBatch || (!batch && len(ms) != 1) {
			t.Fatalf("decoded %d memories (batch %v)", len(ms), batch)
		}
		for _, m := range ms {
			if m == nil {
				t.Fatal("nil memory")
			}
			checkClientError(t, m.Validate(0))
		}
	})
}

func FuzzDecodeRecall(f *testing.F) {
	for _, s := range []string{
		`{"mode":"search","query":"where are the bees kept?","conversation_id":"c1"}`,
		`{"mode":"ambient","messages":[{"speaker":"u","content":"my build fails","at":"2024-05-01T10:00:00Z"}],"entities":["Go"],"conversation_type":"debugging","focal_entity":"Go","limit":5,"token_budget":200,"latency_budget_ms":50,"rerank":"off","kinds":["fact","turn"],"since":"2024-01-01T00:00:00Z","until":"2025-01-01T00:00:00Z","include_invalid":true,"explain":true}`,
		`{"mode":"startup","conversation_id":"c1","turn_id":"t1"}`,
		`{"conversation_id":"c1","query":"the deploy failed","proactive":true}`, `{"mode":"search","query":"x","proactive":true}`, `{"query":"x","proactive":"yes"}`,
		`{"limit":-1}`, `{"limit":0}`, `{"limit":1e10}`, `{"latency_budget_ms":99999999999999}`, `{"messages":[{"at":"now"}]}`,
		`{"mode":`, `{"query":"x","querry":"y"}`, `{"kinds":"fact"}`, `[]`, ``, `{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := decodeRecallBody(body, "ns")
		checkClientError(t, err)
		if err != nil {
			return
		}
		if req.Namespace != "ns" {
			t.Fatalf("namespace = %q", req.Namespace)
		}
		if req.LatencyBudget > maxLatencyBudget {
			t.Fatalf("latency budget %v over the cap", req.LatencyBudget)
		}
		if req.LatencyBudget < 0 && req.LatencyBudget != -time.Millisecond {
			t.Fatalf("negative latency budget %v", req.LatencyBudget)
		}
	})
}

func FuzzDecodeMemoryPatch(f *testing.F) {
	for _, s := range []string{
		`{"importance":0.5}`, `{"importance":null,"valid_at":null,"invalid_at":null,"sensitive":null}`,
		`{"valid_at":"2024-05-01T10:00:00Z","invalid_at":"2025-01-01T00:00:00+02:00","sensitive":true}`,
		`{"content":"x"}`, `{"Importance":1}`, `{"importance":"1"}`, `{"invalid_at":"0001-01-01T00:00:00Z"}`,
		`{"importance":1,"importance":null}`, `{"importance":1e400}`, `[]`, `null`, ``, `{}`, `{"a":`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := decodeMemoryPatch(body)
		checkClientError(t, err)
		if err != nil {
			return
		}
		for _, k := range p.Clear {
			if !slices.Contains(api.MemoryPatchFields, k) {
				t.Fatalf("cleared %q, not a patch field", k)
			}
		}
		if (p.ValidAt != nil && p.ValidAt.IsZero()) || (p.InvalidAt != nil && p.InvalidAt.IsZero()) {
			t.Fatalf("a zero time was accepted: %+v", p)
		}
		// What was accepted means the same once written back the way the client writes it.
		again, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		q, err := decodeMemoryPatch(again)
		if err != nil {
			t.Fatalf("%s: %v", again, err)
		}
		var e1, e2 ingest.Edit
		applyMemoryPatch(&e1, p)
		applyMemoryPatch(&e2, q)
		if e1.Importance != e2.Importance && !(math.IsNaN(e1.Importance) && math.IsNaN(e2.Importance)) ||
			!e1.ValidAt.Equal(e2.ValidAt) || !e1.InvalidAt.Equal(e2.InvalidAt) || e1.Sensitive != e2.Sensitive {
			t.Fatalf("%s and %s apply differently: %+v, %+v", body, again, e1, e2)
		}
	})
}

func FuzzDecodePredict(f *testing.F) {
	for _, s := range []string{
		`{"conversation_id":"c1"}`,
		`{"conversation_id":"c1","turn_id":"t1","messages":[{"speaker":"u","content":"the deploy failed","at":"2024-05-01T10:00:00Z"}],"entities":["Kubernetes"],"conversation_type":"debugging","explain":true}`,
		`{"conversation_id":""}`, `{"conversation_id":null}`, `{"conversation_id":1}`, `{"conversation_id":"c","conversation_type":"chit-chat"}`,
		`{"conversation_id":"c","messages":"hi"}`, `{"conversation_id":"c","messages":[{"at":"yesterday"}]}`, `{"conversation_id":"c","explain":"yes"}`,
		`{"conversation_id":"c","mode":"search"}`, `{"conversation_id":"c"} {}`, `[]`, ``, `{}`, `null`, `{"conversation_id":"c",`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := decodePredictBody(body, "ns")
		checkClientError(t, err)
		if err != nil {
			return
		}
		if req.Namespace != "ns" {
			t.Fatalf("namespace = %q", req.Namespace)
		}
		if err := validateConversationType(req.ConversationType); err != nil {
			t.Fatalf("conversation type %q passed decoding: %v", req.ConversationType, err)
		}
	})
}

func FuzzParseListQuery(f *testing.F) {
	for _, s := range []string{
		"", "kind=fact&kind=turn", "kind=fact,anchor&conversation_id=c1", "since=2024-05-01T00:00:00Z&until=2024-06-01T00:00:00Z",
		"limit=10&offset=20", "limit=0", "limit=-5", "limit=abc", "offset=1e9", "kind=", "since=x", "a=b", "limit=1&limit=2",
		"kind=%00", "conversation_id=" + strings.Repeat("c", 300),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return // net/http hands handlers only what parses
		}
		filter, err := parseListQuery(q)
		checkClientError(t, err)
		if err != nil {
			return
		}
		if filter.Limit < 1 || filter.Limit > maxListLimit || filter.Offset < 0 || filter.Offset > maxListOffset {
			t.Fatalf("filter out of range: %+v", filter)
		}
		for _, k := range filter.Kinds {
			if !k.Valid() {
				t.Fatalf("invalid kind %q accepted", k)
			}
		}
		if !filter.Since.IsZero() && !filter.Until.IsZero() && !filter.Until.After(filter.Since) {
			t.Fatalf("since %v not before until %v", filter.Since, filter.Until)
		}
	})
}

func FuzzParseKeys(f *testing.F) {
	for _, s := range []string{
		`{"keys":[{"key":"sk-aaaaaaaaaaaaaaaa","namespaces":["a","b"],"admin":false}]}`,
		`{"keys":[{"key":"sk-bbbbbbbbbbbbbbbb","namespaces":["*"],"name":"ops"},{"key":"sk-cccccccccccccccc","namespaces":["gamma"],"admin":true}]}`,
		`{"keys":[]}`, `{"keys":[{"key":"short","namespaces":["a"]}]}`, `{"keys":[{"key":"sk-aaaaaaaaaaaaaaaa","namespaces":["a/b"]}]}`,
		`{"keys":[{"key":"sk-aaaaaaaaaaaaaaaa","namespaces":["a"]},{"key":"sk-aaaaaaaaaaaaaaaa","namespaces":["a"]}]}`,
		`{"keys":null}`, `{"keys":[null]}`, `{}`, ``, `keys`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := ParseKeys(data)
		checkClientError(t, err)
		if err != nil {
			if k != nil {
				t.Fatal("keyring and error")
			}
			return
		}
		if k.Len() == 0 {
			t.Fatal("an empty keyring was accepted")
		}
		if _, ok := k.Lookup(""); ok {
			t.Fatal("the empty token authenticates")
		}
	})
}
