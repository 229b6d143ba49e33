package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"

	"github.com/gin-gonic/gin"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/engagement"
	"github.com/salience-ai/salience/models"
)

// Engager applies engagement batches (engagement.Service). Invalid or unknown events are
// rejected one by one in the result; the call fails only for a bad namespace, an empty or
// oversized batch (EINVALID) or a store failure.
type Engager interface {
	Apply(ctx context.Context, ns string, events []*models.Event) (*engagement.BatchResult, error)
}

// errNoEngagement answers the engagement route of a server built without the service.
var errNoEngagement = unavailable("engagement is not configured on this server")

// reportEngagement handles POST /v1/namespaces/:ns/engagement: {"events": [...]}. The answer
// is 200 with one result per event even when every event was rejected (an unparseable at
// included); only a body that is not a batch at all (malformed JSON, unknown fields, a
// field of the wrong type other than at, no events, over 1,000) is a 4xx.
func (s *Server) reportEngagement(c *gin.Context) {
	if s.engagement == nil {
		fail(c, errNoEngagement)
		return
	}
	body, err := readBody(c.Request)
	if err != nil {
		fail(c, err)
		return
	}
	evs, badAt, err := decodeEngagement(body)
	if err != nil {
		fail(c, err)
		return
	}
	res, err := s.engagement.Apply(c.Request.Context(), c.Param("ns"), evs)
	if err != nil {
		fail(c, err)
		return
	}
	// An event whose at did not decode went to Apply as nil, which rejected it as missing;
	// its result says what was wrong instead.
	for i, r := range badAt {
		if r != nil {
			res.Results[i] = *r
		}
	}
	c.JSON(http.StatusOK, engagementToAPI(res))
}

// decodeEngagement decodes an engagement body strictly. The events themselves are validated
// by the service, one by one; so is an event's at, which may be unparseable as a future one
// may be out of range: such an event is nil in evs, and badAt (nil when there are none)
// holds its result, rejected with EINVALID naming "events[i].at". Anything else that does not
// decode fails the batch.
func decodeEngagement(body []byte) (evs []*models.Event, badAt []*engagement.EventResult, err error) {
	var req api.EngagementRequest
	if err := decodeStrict(body, &req); err != nil {
		// The slow path, for bodies that do not decode as a whole: event by event.
		if req.Events, badAt, err = decodeEvents(body); err != nil {
			return nil, nil, err
		}
	}
	switch n := len(req.Events); {
	case req.Events == nil:
		return nil, nil, models.Invalid("events", `events is required: send {"events": [...]}`)
	case n == 0:
		return nil, nil, models.Invalid("events", "no events given: the batch is empty")
	case n > models.MaxBatch:
		return nil, nil, models.Invalid("events", "%d events in one batch, over the limit of %d", n, models.MaxBatch)
	}
	evs = make([]*models.Event, len(req.Events))
	for i := range req.Events {
		if badAt != nil && badAt[i] != nil {
			continue
		}
		e := &req.Events[i]
		evs[i] = &models.Event{
			ID:             e.ID,
			SurfacingID:    e.SurfacingID,
			MemoryID:       e.MemoryID,
			ConversationID: e.ConversationID,
			Type:           models.EventType(e.Type),
			At:             e.At,
			Concepts:       e.Concepts,
		}
	}
	return evs, badAt, nil
}

// decodeEvents decodes a body whose events do not all decode: the envelope strictly, then
// each event strictly on its own. An event whose first misfit is its at gets a rejected
// result in badAt (with its id, when that decodes); any other misfit fails the batch, naming
// the field.
func decodeEvents(body []byte) ([]api.EngagementEvent, []*engagement.EventResult, error) {
	var env struct {
		Events []json.RawMessage `json:"events"`
	}
	if err := decodeStrict(body, &env); err != nil {
		return nil, nil, err
	}
	if env.Events == nil || len(env.Events) > models.MaxBatch {
		return make([]api.EngagementEvent, len(env.Events)), nil, nil // the caller names the problem
	}
	eventType := reflect.TypeFor[api.EngagementEvent]()
	out := make([]api.EngagementEvent, len(env.Events))
	var badAt []*engagement.EventResult
	for i, raw := range env.Events {
		path := fmt.Sprintf("events[%d]", i)
		err := decodeStrict(raw, &out[i])
		if err == nil {
			continue
		}
		field, msg, ok := locate(eventType, raw, path)
		switch {
		case !ok:
			return nil, nil, models.WithFieldPrefix(err, path+".")
		case field != path+".at":
			return nil, nil, models.Invalid(field, "%s", msg)
		}
		var id struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(raw, &id) // best effort: the result carries the id when it is one
		if badAt == nil {
			badAt = make([]*engagement.EventResult, len(env.Events))
		}
		badAt[i] = &engagement.EventResult{ID: id.ID, Status: engagement.StatusRejected, Err: models.Invalid(field, "%s", msg)}
	}
	return out, badAt, nil
}

func engagementToAPI(res *engagement.BatchResult) api.EngagementResponse {
	out := api.EngagementResponse{
		Applied:    res.Applied,
		Duplicates: res.Duplicates,
		Rejected:   res.Rejected,
		Results:    make([]api.EngagementResult, len(res.Results)),
	}
	for i, r := range res.Results {
		out.Results[i] = api.EngagementResult{ID: r.ID, Status: string(r.Status)}
		if r.Err != nil {
			// Per-event errors are EINVALID, ENOTFOUND or ECONFLICT; anything else would be a bug, and is
			// rendered as the generic internal error, as fail does.
			_, body := errorBody(r.Err)
			e := body.Error
			out.Results[i].Error = &e
		}
	}
	return out
}
