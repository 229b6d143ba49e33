package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/ingest"
	"github.com/salience-ai/salience/models"
)

// Ingester writes memories (ingest.Service). It validates the whole batch before writing
// anything and names fields "memories[i].field".
type Ingester interface {
	Ingest(ctx context.Context, ns string, ms []*models.Memory) ([]*models.Memory, error)
}

// MemoryStore is the part of models.Store the memory routes read and delete through.
type MemoryStore interface {
	GetMemory(ctx context.Context, ns, id string) (*models.Memory, error)
	FindMemories(ctx context.Context, f models.MemoryFilter) ([]*models.Memory, int, error)
	DeleteMemory(ctx context.Context, ns, id string) error
}

// createMemories handles POST /v1/namespaces/:ns/memories: one memory object, or
// {"memories": [...]}. The whole batch is validated before anything is written.
func (s *Server) createMemories(c *gin.Context) {
	body, err := readBody(c.Request)
	if err != nil {
		fail(c, err)
		return
	}
	ms, batch, err := decodeMemories(body)
	if err != nil {
		fail(c, err)
		return
	}
	created, err := s.ingester.Ingest(c.Request.Context(), c.Param("ns"), ms)
	if err != nil {
		fail(c, batchField(err, batch, len(ms)))
		return
	}
	s.metrics.ingested.Add(float64(len(created)))
	c.JSON(http.StatusCreated, api.CreateMemoriesResponse{Memories: memoriesToAPI(created)})
}

// decodeMemories decodes the body of a create request: a batch when the top-level object has
// a "memories" key, else a single memory. It reports which form it was. Batches of more than
// models.MaxBatch items are EINVALID.
func decodeMemories(body []byte) ([]*models.Memory, bool, error) {
	if isBatch(body) {
		var req api.CreateMemoriesRequest
		if err := decodeStrict(body, &req); err != nil {
			return nil, true, err
		}
		switch n := len(req.Memories); {
		case n == 0:
			return nil, true, models.Invalid("memories", "no memories given: the batch is empty")
		case n > models.MaxBatch:
			return nil, true, models.Invalid("memories", "%d memories in one batch, over the limit of %d", n, models.MaxBatch)
		}
		ms := make([]*models.Memory, len(req.Memories))
		for i := range req.Memories {
			ms[i] = memoryFromInput(&req.Memories[i])
		}
		return ms, true, nil
	}
	var in api.MemoryInput
	if err := decodeStrict(body, &in); err != nil {
		return nil, false, err
	}
	return []*models.Memory{memoryFromInput(&in)}, false, nil
}

// isBatch peeks at the top-level keys of body for "memories". Anything that is not a JSON
// object is left to the single-memory decoder to reject.
func isBatch(body []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if key, _ := tok.(string); key == "memories" {
			return true
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return false
		}
	}
	return false
}

// batchField makes the field of an ingest error name the batch item even for a batch of one
// ("memories[0].content"), which ingest names plainly ("content") as it would a single memory.
func batchField(err error, batch bool, n int) error {
	if !batch || n != 1 {
		return err
	}
	f := models.ErrorField(err)
	if f == "" || f == "namespace" || strings.HasPrefix(f, "memories") {
		return err
	}
	return models.WithFieldPrefix(err, "memories[0].")
}

// listMemories handles GET /v1/namespaces/:ns/memories.
func (s *Server) listMemories(c *gin.Context) {
	f, err := parseListQuery(c.Request.URL.Query())
	if err != nil {
		fail(c, err)
		return
	}
	f.Namespace = c.Param("ns")
	ms, total, err := s.memories.FindMemories(c.Request.Context(), f)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, api.ListMemoriesResponse{Memories: memoriesToAPI(ms), Total: total})
}

// Listing limits.
const (
	defaultListLimit = 100
	maxListLimit     = 1000
	maxListOffset    = 1_000_000_000
	maxListKinds     = 16
)

// listParams are the query parameters GET …/memories understands; any other is an error, so
// a typo ("knd=fact") does not silently list everything.
var listParams = map[string]bool{"kind": true, "conversation_id": true, "since": true, "until": true, "limit": true, "offset": true}

// parseListQuery turns the query of GET …/memories into a filter: kind (repeatable),
// conversation_id, since and until (RFC 3339; since ≤ created_at < until), limit (1..1000,
// default 100), offset. Errors are EINVALID naming the parameter.
func parseListQuery(q url.Values) (models.MemoryFilter, error) {
	f := models.MemoryFilter{Limit: defaultListLimit}
	for k := range q {
		if !listParams[k] {
			field := models.Clip(k, 40)
			if field == "" {
				field = "query" // "?=x": a parameter without a name still gets a field
			}
			return f, models.Invalid(field, "unknown query parameter %q (known: kind, conversation_id, since, until, limit, offset)", models.Clip(k, 40))
		}
	}
	if len(q["kind"]) > maxListKinds {
		return f, models.Invalid("kind", "at most %d kind parameters", maxListKinds)
	}
	for _, v := range q["kind"] {
		for _, k := range strings.Split(v, ",") {
			if !models.Kind(k).Valid() {
				return f, models.Invalid("kind", "unknown kind %q (one of turn, summary, crystal, anchor, fact, insight, document)", models.Clip(k, 40))
			}
			f.Kinds = append(f.Kinds, models.Kind(k))
		}
	}
	if v, ok := single(q, "conversation_id"); ok {
		if v == "" || len(v) > models.MaxIDBytes {
			return f, models.Invalid("conversation_id", "conversation_id must be 1 to %d bytes", models.MaxIDBytes)
		}
		f.ConversationID = v
	}
	var err error
	if f.Since, err = timeParam(q, "since"); err != nil {
		return f, err
	}
	if f.Until, err = timeParam(q, "until"); err != nil {
		return f, err
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Until.After(f.Since) {
		return f, models.Invalid("until", "until must be after since")
	}
	if v, ok := single(q, "limit"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxListLimit {
			return f, models.Invalid("limit", "limit must be an integer from 1 to %d", maxListLimit)
		}
		f.Limit = n
	}
	if v, ok := single(q, "offset"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > maxListOffset {
			return f, models.Invalid("offset", "offset must be an integer from 0 to %d", maxListOffset)
		}
		f.Offset = n
	}
	for _, k := range []string{"conversation_id", "since", "until", "limit", "offset"} {
		if len(q[k]) > 1 {
			return f, models.Invalid(k, "%s is given more than once", k)
		}
	}
	return f, nil
}

// single returns the first value of a query parameter and whether it was given.
func single(q url.Values, key string) (string, bool) {
	vs, ok := q[key]
	if !ok || len(vs) == 0 {
		return "", false
	}
	return vs[0], true
}

func timeParam(q url.Values, key string) (time.Time, error) {
	v, ok := single(q, key)
	if !ok {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, models.Invalid(key, "%s must be an RFC 3339 time such as 2024-05-01T14:30:00Z", key)
	}
	return t, nil
}

// getMemory handles GET /v1/namespaces/:ns/memories/:id. A chunk's id returns its parent: a
// client holding a fragment's id gets the whole memory.
func (s *Server) getMemory(c *gin.Context) {
	ns, id := c.Param("ns"), c.Param("id")
	if err := validateID(id); err != nil {
		fail(c, err)
		return
	}
	m, err := s.memories.GetMemory(c.Request.Context(), ns, id)
	if err == nil && m.IsChunk() {
		m, err = s.memories.GetMemory(c.Request.Context(), ns, m.ParentID)
	}
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, memoryToAPI(m))
}

// deleteMemory handles DELETE /v1/namespaces/:ns/memories/:id; a chunk's id deletes its
// parent with all its chunks.
func (s *Server) deleteMemory(c *gin.Context) {
	ns, id := c.Param("ns"), c.Param("id")
	if err := validateID(id); err != nil {
		fail(c, err)
		return
	}
	m, err := s.memories.GetMemory(c.Request.Context(), ns, id)
	if err == nil && m.IsChunk() {
		id = m.ParentID
	}
	if err == nil {
		err = s.memories.DeleteMemory(c.Request.Context(), ns, id)
	}
	if err != nil {
		fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// MemoryEditor changes what a client may change of a stored memory (ingest.Service): change
// gets the editable fields as stored and returns the new ones, in one store transaction.
type MemoryEditor interface {
	Edit(ctx context.Context, ns, id string, change func(ingest.Edit) (ingest.Edit, error)) (*models.Memory, error)
}

// memoryFields are the JSON names of a memory's fields (api.Memory), so a patch naming one it
// cannot change gets a message that says so rather than "unknown field".
var memoryFields = func() map[string]bool {
	out := map[string]bool{}
	t := reflect.TypeFor[api.Memory]()
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			out[name] = true
		}
	}
	return out
}()

// patchMemory handles PATCH /v1/namespaces/:ns/memories/:id: a JSON merge patch of the
// memory's importance, validity and sensitivity (api.MemoryPatch); a chunk's id edits its
// memory, whose chunks follow. It answers the memory as stored.
func (s *Server) patchMemory(c *gin.Context) {
	ns, id := c.Param("ns"), c.Param("id")
	if err := validateID(id); err != nil {
		fail(c, err)
		return
	}
	if s.editor == nil {
		fail(c, models.Errorf(models.EUNAVAILABLE, "this server cannot edit memories"))
		return
	}
	body, err := readBody(c.Request)
	if err != nil {
		fail(c, err)
		return
	}
	p, err := decodeMemoryPatch(body)
	if err != nil {
		fail(c, err)
		return
	}
	m, err := s.editor.Edit(c.Request.Context(), ns, id, func(e ingest.Edit) (ingest.Edit, error) {
		applyMemoryPatch(&e, p)
		return e, nil
	})
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, memoryToAPI(m))
}

// decodeMemoryPatch decodes a PATCH body: an object whose keys are exactly fields of
// api.MemoryPatch, each null (into Clear) or of its type.
func decodeMemoryPatch(body []byte) (*api.MemoryPatch, error) {
	var keys map[string]json.RawMessage
	if json.Unmarshal(body, &keys) == nil {
		if keys == nil {
			return nil, models.Invalid("", "a merge patch must be a JSON object")
		}
		names := make([]string, 0, len(keys))
		for k := range keys {
			names = append(names, k)
		}
		sort.Strings(names) // the first bad field by name, the same every time
		for _, k := range names {
			switch {
			case slices.Contains(api.MemoryPatchFields, k):
			case memoryFields[k]:
				return nil, models.Invalid(k, "%s cannot be changed: a patch changes %s; a memory with other content is a new memory (store it, and delete this one)",
					k, strings.Join(api.MemoryPatchFields, ", "))
			default:
				return nil, models.Invalid(models.Clip(k, 100), "unknown field %q", models.Clip(k, 100))
			}
		}
	}
	var p api.MemoryPatch
	if err := decodeStrict(body, &p); err != nil {
		return nil, err
	}
	for _, k := range api.MemoryPatchFields {
		if raw, ok := keys[k]; ok && string(bytes.TrimSpace(raw)) == "null" {
			p.Clear = append(p.Clear, k)
		}
	}
	return &p, nil
}

// applyMemoryPatch lays p over e: set fields replace, cleared ones return to their default.
func applyMemoryPatch(e *ingest.Edit, p *api.MemoryPatch) {
	for _, k := range p.Clear {
		switch k {
		case "importance":
			e.Importance = 0
		case "valid_at":
			e.ValidAt = time.Time{}
		case "invalid_at":
			e.InvalidAt = time.Time{}
		case "sensitive":
			e.Sensitive = false
		}
	}
	if p.Importance != nil {
		e.Importance = *p.Importance
	}
	if p.ValidAt != nil {
		e.ValidAt = *p.ValidAt
	}
	if p.InvalidAt != nil {
		e.InvalidAt = *p.InvalidAt
	}
	if p.Sensitive != nil {
		e.Sensitive = *p.Sensitive
	}
}

// validateID rejects ids no memory can have, before they reach the store.
func validateID(id string) error {
	if id == "" || len(id) > models.MaxIDBytes || !printableASCII(id) {
		return models.Invalid("id", "%s is not a memory id", fmt.Sprintf("%q", models.Clip(id, 40)))
	}
	return nil
}
