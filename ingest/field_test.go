package ingest

import (
	"errors"
	"testing"

	"github.com/salience-ai/salience/models"
)

// TestStoreField: a store error names the client's field, never the store's write structure.
func TestStoreField(t *testing.T) {
	for _, tc := range []struct {
		in    string
		batch bool
		want  string
	}{
		{"writes[0].memory.created_at", false, "created_at"},
		{"writes[3].memory.created_at", true, "memories[3].created_at"},
		{"writes[2].chunks[4].content", true, "memories[2].content"},
		{"writes[2].chunks[4].parent_id", false, "content"},
		{"writes[1].memory", true, "memories[1]"},
		{"namespace", true, "namespace"},
		{"", true, ""},
	} {
		err := storeField(models.Invalid(tc.in, "bad"), tc.batch)
		if got := models.ErrorField(err); got != tc.want {
			t.Errorf("storeField(%q, batch %v) field = %q, want %q", tc.in, tc.batch, got, tc.want)
		}
		if models.ErrorCode(err) != models.EINVALID || models.ErrorMessage(err) != "bad" {
			t.Errorf("storeField(%q) = %v, lost its code or message", tc.in, err)
		}
	}
	plain := errors.New("disk I/O error")
	if got := storeField(plain, true); got != plain {
		t.Errorf("storeField(plain) = %v, want it unchanged", got)
	}
}
