package server

import (
	"net/url"
	"strings"
	"testing"

	"github.com/salience-ai/salience/models"
)

func TestOnlyQuery(t *testing.T) {
	for _, tt := range []struct {
		query string
		known []string
		field string // "" = accepted
		msg   string
	}{
		{"", nil, "", ""},
		{"", []string{"a"}, "", ""},
		{"a=1&b=2", []string{"a", "b"}, "", ""},
		{"a=", []string{"a"}, "", ""},
		{"a=1", nil, "a", "this route takes none"},
		{"c=1", []string{"a", "b"}, "c", "known: a, b"},
		{"=1", []string{"a"}, "query", "has no name"},
		{"a=1&a=2", []string{"a"}, "a", "a is given more than once"},
		{"a=&a=", []string{"a"}, "a", "given more than once"},
		{"A=1", []string{"a"}, "A", "unknown query parameter"},
	} {
		q, err := url.ParseQuery(tt.query)
		if err != nil {
			t.Fatal(err)
		}
		err = onlyQuery(q, tt.known...)
		if models.ErrorField(err) != tt.field || (tt.field != "" && (models.ErrorCode(err) != models.EINVALID || !strings.Contains(err.Error(), tt.msg))) {
			t.Errorf("%q with %v: %v; want invalid naming %q (%s)", tt.query, tt.known, err, tt.field, tt.msg)
		}
		if tt.field == "" && err != nil {
			t.Errorf("%q with %v: %v, want accepted", tt.query, tt.known, err)
		}
	}
}
