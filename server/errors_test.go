package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/embed"
	"github.com/salience-ai/salience/ingest"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/store/sqlite"
)

func TestErrorBody(t *testing.T) {
	tests := []struct {
		err        error
		wantStatus int
		want       api.Error
	}{
		{models.Invalid("items[3].content", "content is empty"), http.StatusBadRequest, api.Error{Code: "invalid", Message: "content is empty", Field: "items[3].content"}},
		{&models.Error{Code: models.ETOOLARGE, Message: "big"}, http.StatusRequestEntityTooLarge, api.Error{Code: "too_large", Message: "big"}},
		{models.Errorf(models.EUNAUTHORIZED, "who"), http.StatusUnauthorized, api.Error{Code: "unauthorized", Message: "who"}},
		{models.Errorf(models.EFORBIDDEN, "no"), http.StatusForbidden, api.Error{Code: "forbidden", Message: "no"}},
		{fmt.Errorf("store: %w", models.Errorf(models.ENOTFOUND, "no memory")), http.StatusNotFound, api.Error{Code: "not_found", Message: "no memory"}},
		{models.Errorf(models.ECONFLICT, "exists"), http.StatusConflict, api.Error{Code: "conflict", Message: "exists"}},
		{models.Errorf(models.EDUPLICATE, "replay"), http.StatusConflict, api.Error{Code: "duplicate", Message: "replay"}},
		{unavailable("loading"), http.StatusServiceUnavailable, api.Error{Code: "unavailable", Message: "loading"}},
		// An unavailable error not marked safe may describe a dependency: an embedder's
		// address, a path, a driver's error. Callers get a generic text.
		{models.Errorf(models.EUNAVAILABLE, `embedder failed: Post "http://10.0.0.7:8080/v1/embeddings": connection refused`), http.StatusServiceUnavailable, api.Error{Code: "unavailable", Message: msgUnavailable}},
		{fmt.Errorf("sqlite: insert: %w: disk I/O error at /data/salience.db-wal", models.Errorf(models.EUNAVAILABLE, "the disk is full")), http.StatusServiceUnavailable, api.Error{Code: "unavailable", Message: msgUnavailable}},
		{fmt.Errorf("ingest: %w", &models.Error{Code: models.EUNAVAILABLE, Message: "the embedder is unavailable", Safe: true}), http.StatusServiceUnavailable, api.Error{Code: "unavailable", Message: "the embedder is unavailable"}},
		{models.Errorf(codeMethodNotAllowed, "GET"), http.StatusMethodNotAllowed, api.Error{Code: "method_not_allowed", Message: "GET"}},
		// Internal errors never show their text: it may hold a driver's message or a path.
		{models.Errorf(models.EINTERNAL, "disk /var/x failed"), http.StatusInternalServerError, api.Error{Code: "internal", Message: "internal error"}},
		{errors.New("sql: database is locked"), http.StatusInternalServerError, api.Error{Code: "internal", Message: "internal error"}},
		{models.Errorf("teapot", "short and stout"), http.StatusInternalServerError, api.Error{Code: "internal", Message: "internal error"}},
	}
	for _, tt := range tests {
		status, body := errorBody(tt.err)
		if status != tt.wantStatus || body.Error != tt.want {
			t.Errorf("errorBody(%v) = %d %+v, want %d %+v", tt.err, status, body.Error, tt.wantStatus, tt.want)
		}
	}
}

// TestEmbedderDownLeaksNoAddress: with the OpenAI-compatible embedder down, ingest is a 503
// whose message names no internal address; the address is in the log line of the request,
// with its request id.
func TestEmbedderDownLeaksNoAddress(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	addr := down.Listener.Addr().String()
	down.Close() // nothing listens there now: connection refused
	emb, err := embed.NewOpenAI(embed.OpenAIConfig{BaseURL: "http://" + addr + "/v1", Model: "m", Dims: 8})
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "salience.db"), sqlite.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	s, logs := newTestServer(t, Config{Ingester: ingest.New(st, emb)})
	res, body := do(t, s.Handler(), "POST", "/v1/namespaces/a/memories", `{"kind":"fact","content":"bees"}`, "X-Request-ID", "req-embed-down")
	e := errorOf(t, body)
	if res.StatusCode != http.StatusServiceUnavailable || e.Code != models.EUNAVAILABLE {
		t.Fatalf("POST = %d %s, want 503 unavailable", res.StatusCode, body)
	}
	if strings.Contains(string(body), addr) || strings.Contains(string(body), "127.0.0.1") || strings.Contains(string(body), "dial") {
		t.Errorf("the body %s names the embedder's address", body)
	}
	var line string
	for l := range strings.Lines(logs.String()) {
		if strings.Contains(l, "request_id=req-embed-down") {
			line = l
		}
	}
	if !strings.Contains(line, addr) {
		t.Errorf("the request's log line %q lacks the embedder's address %s", line, addr)
	}
}
