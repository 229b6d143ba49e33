package testserver

import (
	"net/http"
	"testing"

	"github.com/salience-ai/salience/internal/openapicheck"
	"github.com/salience-ai/salience/server"
)

// Validator is an http.RoundTripper that checks every exchange against the server's
// OpenAPI document (server/openapi.yaml); see openapicheck.Validator.
type Validator = openapicheck.Validator

// NewValidator loads the server's OpenAPI document and returns a Validator sending through
// next (http.DefaultTransport when nil). Failures are reported on t.
func NewValidator(t testing.TB, next http.RoundTripper) *Validator {
	t.Helper()
	return openapicheck.New(t, server.OpenAPI(), next)
}
