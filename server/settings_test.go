package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/settings"
	"github.com/salience-ai/salience/store/sqlite"
)

// heldStore is a store whose transactions wait while held is open, as they do behind a
// record another server has locked.
type heldStore struct {
	*sqlite.Store
	held chan struct{} // closed: let transactions run
}

func (s heldStore) Update(ctx context.Context, fn func(models.Tx) error) error {
	select {
	case <-s.held:
		return s.Store.Update(ctx, fn)
	case <-ctx.Done():
		return fmt.Errorf("waiting for a lock: %w", ctx.Err())
	}
}

// TestSettingsWriteUnavailableAfterTheWait: a PATCH of settings another writer holds waits
// the settings service's WriteWait, then is a 503 in the one error shape with Retry-After,
// and changes nothing; once the holder lets go the same PATCH is version 1.
func TestSettingsWriteUnavailableAfterTheWait(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "salience.db"), sqlite.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	held := make(chan struct{})
	sets := settings.New(heldStore{st, held}, settings.Options{WriteWait: 50 * time.Millisecond})
	s, _ := newTestServer(t, Config{Settings: sets})
	h := s.Handler()

	res, body := do(t, h, http.MethodPatch, "/v1/namespaces/a/settings", `{"diversity": 0.2}`)
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") != "1" {
		t.Fatalf("PATCH behind a holder = %d (Retry-After %q) %s, want 503 with Retry-After 1", res.StatusCode, res.Header.Get("Retry-After"), body)
	}
	var e api.ErrorResponse
	if err := json.Unmarshal(body, &e); err != nil || e.Error.Code != models.EUNAVAILABLE || !strings.Contains(e.Error.Message, "being written") {
		t.Errorf("503 body = %s (%v), want code %s saying the settings are being written", body, err, models.EUNAVAILABLE)
	}
	if raw, _ := st.GetState(context.Background(), "settings/a"); raw != "" {
		t.Errorf("stored %q after a 503", raw)
	}

	close(held)
	res, body = do(t, h, http.MethodPatch, "/v1/namespaces/a/settings", `{"diversity": 0.2}`)
	var got api.Settings
	if res.StatusCode != http.StatusOK || json.Unmarshal(body, &got) != nil {
		t.Fatalf("PATCH after the holder = %d %s, want 200", res.StatusCode, body)
	}
	if got.Version != 1 || got.Diversity == nil || *got.Diversity != 0.2 {
		t.Errorf("settings = %s, want version 1 with diversity 0.2", body)
	}
}
