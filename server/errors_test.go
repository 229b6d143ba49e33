package server

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/models"
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
		{models.Errorf(models.EUNAVAILABLE, "loading"), http.StatusServiceUnavailable, api.Error{Code: "unavailable", Message: "loading"}},
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
