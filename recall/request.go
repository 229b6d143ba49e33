package recall

import (
	"fmt"
	"strings"
	"time"

	"github.com/salience-ai/salience/models"
)

// Request limits and defaults.
const (
	DefaultLimit         = 10
	MaxLimit             = 100
	DefaultLatencyBudget = 300 * time.Millisecond
	MaxQueryBytes        = 16 << 10
	MaxMessages          = 50
	MaxEntities          = 64
	MaxSources           = 8 // namespaces besides the home one, each searched in turn
)

// normalize validates req and fills its defaults. Errors name the JSON field.
func normalize(req *Request, now time.Time) error {
	if err := models.ValidateNamespace(req.Namespace); err != nil {
		return err
	}
	if req.Mode == "" {
		req.Mode = models.ModeAmbient
	}
	switch req.Mode {
	case models.ModeAmbient, models.ModeSearch, models.ModeStartup:
	default:
		return models.Invalid("mode", "mode must be ambient, search or startup")
	}
	if err := checkTurn(req.ConversationID, req.TurnID, req.Messages, req.Entities); err != nil {
		return err
	}
	if len(req.Query) > MaxQueryBytes {
		return &models.Error{Code: models.ETOOLARGE, Field: "query", Message: fmt.Sprintf("query over %d bytes", MaxQueryBytes)}
	}
	if req.Mode != models.ModeStartup && strings.TrimSpace(req.Query) == "" && !hasMessage(req.Messages) {
		return models.Invalid("query", "query or messages is required")
	}
	switch {
	case req.Limit == 0 && req.Mode == models.ModeStartup:
		// The startup package is meant whole ("all turns since the last summary"), so
		// unasked it is as large as any response may be.
		req.Limit = MaxLimit
	case req.Limit == 0:
		req.Limit = DefaultLimit
	case req.Limit < 0 || req.Limit > MaxLimit:
		return models.Invalid("limit", "limit must be between 1 and %d", MaxLimit)
	}
	if req.TokenBudget < 0 {
		return models.Invalid("token_budget", "token_budget must not be negative")
	}
	switch {
	case req.LatencyBudget == 0:
		req.LatencyBudget = DefaultLatencyBudget
	case req.LatencyBudget < 0:
		return models.Invalid("latency_budget_ms", "latency_budget_ms must not be negative")
	}
	switch req.Rerank {
	case "":
		req.Rerank = "auto"
	case "auto", "off", "on":
	default:
		return models.Invalid("rerank", "rerank must be auto, off or on")
	}
	for i, k := range req.Kinds {
		if !k.Valid() {
			return models.Invalid(fmt.Sprintf("kinds[%d]", i), "unknown kind %q", k)
		}
	}
	if !req.Since.IsZero() && !req.Until.IsZero() && !req.Until.After(req.Since) {
		return models.Invalid("until", "until must be after since")
	}
	if len(req.Sources) > MaxSources {
		return models.Invalid("namespaces", "at most %d namespaces besides the route's", MaxSources)
	}
	for i, src := range req.Sources {
		if err := models.ValidateNamespace(src); err != nil {
			return models.Invalid(fmt.Sprintf("namespaces[%d]", i), "%s", models.ErrorMessage(err))
		}
	}
	req.Sources = distinctSources(req.Namespace, req.Sources)
	if req.Mode == models.ModeStartup && len(req.Sources) > 0 {
		return models.Invalid("namespaces", "the startup package is the home namespace's own; recall other namespaces in ambient or search mode")
	}
	if req.Proactive && req.Mode != models.ModeAmbient {
		return models.Invalid("proactive", "proactive applies to ambient mode only")
	}
	if req.Now.IsZero() {
		req.Now = now
	}
	return nil
}

func hasMessage(ms []Message) bool {
	for _, m := range ms {
		if strings.TrimSpace(m.Content) != "" {
			return true
		}
	}
	return false
}

// distinctSources drops the home namespace and repeats from a request's sources, keeping
// their order: a namespace named twice is still searched once.
func distinctSources(home string, srcs []string) []string {
	if len(srcs) == 0 {
		return srcs
	}
	seen := map[string]bool{home: true}
	out := make([]string, 0, len(srcs))
	for _, s := range srcs {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// checkTurn bounds what recall and predict requests share: the conversation and turn ids,
// the messages and the entities. Errors name the JSON field.
func checkTurn(conversationID, turnID string, msgs []Message, entities []string) error {
	if len(conversationID) > models.MaxIDBytes {
		return models.Invalid("conversation_id", "at most %d bytes", models.MaxIDBytes)
	}
	if len(turnID) > models.MaxIDBytes {
		return models.Invalid("turn_id", "at most %d bytes", models.MaxIDBytes)
	}
	if len(msgs) > MaxMessages {
		return models.Invalid("messages", "at most %d messages", MaxMessages)
	}
	for i, m := range msgs {
		if len(m.Content) > models.MaxContentBytes {
			return &models.Error{Code: models.ETOOLARGE, Field: fmt.Sprintf("messages[%d].content", i), Message: "message over the content limit"}
		}
	}
	if len(entities) > MaxEntities {
		return models.Invalid("entities", "at most %d entities", MaxEntities)
	}
	return nil
}
