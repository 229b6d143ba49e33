// Package api holds the JSON wire types of Salience's HTTP API, shared by the server and Go
// clients. It has no dependency beyond the standard library, so a bot can import it without
// pulling in the server.
//
// Conventions: field names are snake_case; times are RFC 3339 strings; optional numbers use
// their zero value for "default" (documented per field); every error response has the shape
// of ErrorResponse.
package api

// ErrorResponse is the body of every error response.
type ErrorResponse struct {
	Error Error `json:"error"`
}

// Error describes what went wrong. Code is one of the models error codes ("invalid",
// "too_large", "unauthorized", "forbidden", "not_found", "conflict", "duplicate",
// "unavailable", "internal"), "method_not_allowed" or "unsupported_media_type"; Field, when set, names the input at
// fault as a JSON path ("memories[3].content") or a query parameter ("limit").
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// StatusResponse is the body of /healthz and /readyz when they succeed.
type StatusResponse struct {
	Status string `json:"status"`
}

// NamespacesResponse lists namespaces (admin), with the embedder of each one that holds
// vectors and the one this server embeds with: a namespace is served only by the embedder
// that made its vectors.
type NamespacesResponse struct {
	Namespaces []string            `json:"namespaces"`
	Embedders  map[string]Embedder `json:"embedders"`
	Embedder   *Embedder           `json:"embedder,omitempty"`
}

// Embedder identifies an embedder: its name (model and version, e.g. local-hash-v1-256) and
// the size of its vectors. An empty name is a namespace embedded before names were recorded,
// not yet opened by a server.
type Embedder struct {
	Name string `json:"name"`
	Dims int    `json:"dims"`
}

// NamespaceDeletedResponse says what deleting a namespace deleted (admin): its memories,
// chunks included, and every record, the memories included (rows in the embedded store,
// nodes in Neo4j).
type NamespaceDeletedResponse struct {
	Namespace string `json:"namespace"`
	Memories  int    `json:"memories"`
	Records   int    `json:"records"`
}

// RelearnResponse says what rebuilding a namespace's relevance model did (admin): the
// events replayed, those skipped because their surfacing is gone, the rebuilt model's
// version and the largest difference of a weight from the online model's.
type RelearnResponse struct {
	Namespace string  `json:"namespace"`
	Events    int     `json:"events"`
	Skipped   int     `json:"skipped"`
	Version   int64   `json:"version"`
	MaxDiff   float64 `json:"max_diff"`
}
