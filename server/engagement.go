package server

import (
	"context"
	"net/http"

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
var errNoEngagement = models.Errorf(models.EUNAVAILABLE, "engagement is not configured on this server")

// reportEngagement handles POST /v1/namespaces/:ns/engagement: {"events": [...]}. The answer
// is 200 with one result per event even when every event was rejected; only a body that is
// not a batch at all (malformed JSON, unknown fields, no events, over 1,000) is a 4xx.
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
	evs, err := decodeEngagement(body)
	if err != nil {
		fail(c, err)
		return
	}
	res, err := s.engagement.Apply(c.Request.Context(), c.Param("ns"), evs)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, engagementToAPI(res))
}

// decodeEngagement decodes an engagement body strictly. The events themselves are validated
// by the service, one by one.
func decodeEngagement(body []byte) ([]*models.Event, error) {
	var req api.EngagementRequest
	if err := decodeStrict(body, &req); err != nil {
		return nil, err
	}
	switch n := len(req.Events); {
	case req.Events == nil:
		return nil, models.Invalid("events", `events is required: send {"events": [...]}`)
	case n == 0:
		return nil, models.Invalid("events", "no events given: the batch is empty")
	case n > models.MaxBatch:
		return nil, models.Invalid("events", "%d events in one batch, over the limit of %d", n, models.MaxBatch)
	}
	evs := make([]*models.Event, len(req.Events))
	for i := range req.Events {
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
	return evs, nil
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
			// Per-event errors are EINVALID or ENOTFOUND; anything else would be a bug, and is
			// rendered as the generic internal error, as fail does.
			_, body := errorBody(r.Err)
			e := body.Error
			out.Results[i].Error = &e
		}
	}
	return out
}
