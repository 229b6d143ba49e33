package openapicheck

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const doc = `openapi: 3.0.3
info: { title: t, version: "1" }
paths:
  /things:
    post:
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              required: [name]
              properties: { name: { type: string } }
      responses:
        "201":
          description: Created.
          content:
            application/json:
              schema:
                type: object
                required: [id]
                properties: { id: { type: string } }
        "400":
          description: Refused.
          content:
            application/json:
              schema: { type: object }
`

// TestValidatorCatchesWhatTheDocumentForbids runs exchanges the document allows and ones it
// forbids through the validator, with a handler answering as each case says.
func TestValidatorCatchesWhatTheDocumentForbids(t *testing.T) {
	d, err := Load([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, method, path, body string
		status                   int
		answer                   string
		want                     string // in the report; "" = no report
	}{
		{"valid", "POST", "/things", `{"name":"x"}`, 201, `{"id":"1"}`, ""},
		{"invalid request refused", "POST", "/things", `{"nom":"x"}`, 400, `{}`, ""},
		{"undocumented route answered 404", "GET", "/nothing", "", 404, `{}`, ""},
		{"undocumented method answered 405", "GET", "/things", "", 405, `{}`, ""},
		{"body off its schema", "POST", "/things", `{"name":"x"}`, 201, `{"id":1}`, "does not match the document"},
		{"undocumented status", "POST", "/things", `{"name":"x"}`, 500, `{}`, "does not match the document"},
		{"invalid request accepted", "POST", "/things", `{"nom":"x"}`, 201, `{"id":"1"}`, "calls the request invalid"},
		{"undocumented route served", "GET", "/nothing", "", 200, `{}`, "is not documented"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				w.Write([]byte(tc.answer))
			})
			rec := &Recorder{TB: t}
			v := d.Validator(rec, Handler{h})
			req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			res, err := v.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != tc.status {
				t.Errorf("status %d, want %d", res.StatusCode, tc.status)
			}
			rec.Expect(t, tc.want)
		})
	}
}

func TestValidatorRecordsOperations(t *testing.T) {
	v := New(t, []byte(doc), Handler{http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(201)
		w.Write([]byte(`{"id":"1"}`))
	})})
	if ops := strings.Join(v.Operations(), ","); ops != "POST /things" {
		t.Errorf("operations %q", ops)
	}
	req := httptest.NewRequest("POST", "/things", strings.NewReader(`{"name":"x"}`))
	req.Header.Set("Content-Type", "application/json")
	if _, err := v.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	if seen := strings.Join(v.Seen(), ","); seen != "POST /things" {
		t.Errorf("seen %q", seen)
	}
}

func TestLoadRefusesAnInvalidDocument(t *testing.T) {
	if _, err := Load([]byte("openapi: 3.0.3\npaths: {}\n")); err == nil {
		t.Error("a document without info loaded")
	}
}
