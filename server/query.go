package server

import (
	"net/url"
	"slices"
	"strings"

	"github.com/salience-ai/salience/models"
)

// onlyQuery checks a route's query against the parameters it takes, each at most once: any
// other name (a typo must not be silently ignored) or a repeated one (the handler would
// read the first and ignore the rest, so "limit=5&limit=x" would pass as valid) is
// EINVALID naming it.
func onlyQuery(q url.Values, known ...string) error {
	for k, vs := range q {
		switch {
		case k == "":
			return models.Invalid("query", "a query parameter has no name")
		case !slices.Contains(known, k):
			name := models.Clip(k, 40)
			if len(known) == 0 {
				return models.Invalid(name, "unknown query parameter %q (this route takes none)", name)
			}
			return models.Invalid(name, "unknown query parameter %q (known: %s)", name, strings.Join(known, ", "))
		case len(vs) > 1:
			return models.Invalid(k, "%s is given more than once", k)
		}
	}
	return nil
}

// noQuery rejects any query parameter: the route takes none.
func noQuery(q url.Values) error { return onlyQuery(q) }
