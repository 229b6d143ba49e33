package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/recall"
)

// Recaller answers recall requests (recall.Pipeline). It validates the request and names
// the JSON fields of bad input.
type Recaller interface {
	Recall(ctx context.Context, req *recall.Request) (*recall.Response, error)
}

// recall handles POST /v1/namespaces/:ns/recall.
func (s *Server) recall(c *gin.Context) {
	req, err := decodeRecall(c.Request, c.Param("ns"))
	if err != nil {
		fail(c, err)
		return
	}
	// Shared memory: every namespace read besides the route's must be granted to the key,
	// checked here with the route's own rule (authorizeNamespace).
	if p := principal(c); p != nil {
		for i, ns := range req.Sources {
			if err := models.ValidateNamespace(ns); err != nil {
				fail(c, models.Invalid(fmt.Sprintf("namespaces[%d]", i), "%s", models.ErrorMessage(err)))
				return
			}
			if !p.CanAccess(ns) {
				fail(c, &models.Error{Code: models.EFORBIDDEN, Field: fmt.Sprintf("namespaces[%d]", i),
					Message: fmt.Sprintf("this API key is not granted namespace %q", models.Clip(ns, 70))})
				return
			}
		}
	}
	req.Now = s.now()
	start := time.Now()
	resp, err := s.recaller.Recall(c.Request.Context(), req)
	if err != nil {
		fail(c, err)
		return
	}
	mode := req.Mode // the pipeline fills the default in; a successful request has a valid mode
	if mode == "" {
		mode = models.ModeAmbient
	}
	s.metrics.recallLatency.WithLabelValues(string(mode)).Observe(time.Since(start).Seconds())
	c.JSON(http.StatusOK, recallResponseToAPI(resp))
}

// decodeRecallBody decodes a recall body into the pipeline's request.
func decodeRecallBody(body []byte, ns string) (*recall.Request, error) {
	var in api.RecallRequest
	if err := decodeStrict(body, &in); err != nil {
		return nil, err
	}
	if err := validateConversationType(in.ConversationType); err != nil {
		return nil, err
	}
	if in.Limit == 0 {
		// An absent limit is the default; a written 0 is a request for nothing, refused as
		// the listing routes refuse limit=0. The struct cannot tell the two apart.
		var given struct {
			Limit *int `json:"limit"`
		}
		if json.Unmarshal(body, &given) == nil && given.Limit != nil {
			return nil, models.Invalid("limit", "limit must be between 1 and %d (leave it out for the default)", recall.MaxLimit)
		}
	}
	return recallRequest(ns, &in), nil
}

// conversationTypes is the closed set a bot may name; empty means "infer it".
var conversationTypes = []string{models.ConvDebugging, models.ConvHelpSeeking, models.ConvExploration, models.ConvCasual, models.ConvOther}

// validateConversationType rejects any other type: the type becomes a key of the
// namespace's metrics and of the bandit's arms, so a free-form string (15,000 characters,
// control characters, a new one each turn) would grow them without bound.
func validateConversationType(t string) error {
	if t == "" || slices.Contains(conversationTypes, t) {
		return nil
	}
	return models.Invalid("conversation_type", "unknown conversation_type %q (one of %s; leave it out to have it inferred)",
		models.Clip(t, 40), strings.Join(conversationTypes, ", "))
}

func decodeRecall(r *http.Request, ns string) (*recall.Request, error) {
	body, err := readBody(r)
	if err != nil {
		return nil, err
	}
	return decodeRecallBody(body, ns)
}

// maxLatencyBudget bounds latency_budget_ms before it becomes a Duration, so a huge value
// cannot overflow into a negative one.
const maxLatencyBudget = time.Hour

// msDuration converts a millisecond count to a Duration, keeping its sign and capping its size.
func msDuration(ms int) time.Duration {
	switch {
	case ms > int(maxLatencyBudget/time.Millisecond):
		return maxLatencyBudget
	case ms < 0:
		return -time.Millisecond
	}
	return time.Duration(ms) * time.Millisecond
}
