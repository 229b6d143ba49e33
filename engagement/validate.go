package engagement

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/salience-ai/salience/models"
)

// DefaultMaxSkew is how far in the future an event's time may lie: bots' clocks drift a
// little, but a report about the future is a bug on the caller's side.
const DefaultMaxSkew = 5 * time.Minute

// minEventTime is the earliest event time accepted; anything before it is a zero or garbage
// timestamp from the client, not a report.
var minEventTime = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)

// check validates one reported event on its own (what needs the store — its surfacing, its
// memory, the lower bound of its time — is apply's) and returns a copy in canonical form:
// namespace ns, time in UTC (zero stays zero: apply dates it), concepts copied, not
// Implicit (only ApplyImplicit writes implicit events). Errors name the event's field.
func (s *Service) check(ns string, e *models.Event, now time.Time) (*models.Event, error) {
	if e == nil {
		return nil, models.Invalid("", "the event is missing")
	}
	if e.ID == "" {
		return nil, models.Invalid("id", "id is required: a client-chosen id makes the report idempotent")
	}
	for _, f := range []struct{ name, val string }{
		{"id", e.ID}, {"surfacing_id", e.SurfacingID}, {"memory_id", e.MemoryID}, {"conversation_id", e.ConversationID},
	} {
		if len(f.val) > models.MaxIDBytes || !utf8.ValidString(f.val) {
			return nil, models.Invalid(f.name, "%s must be UTF-8 text of at most %d bytes", f.name, models.MaxIDBytes)
		}
	}
	if strings.HasPrefix(e.ID, ImplicitPrefix) {
		return nil, models.Invalid("id", "ids starting with %q are reserved for the implicit-ignore job", ImplicitPrefix)
	}
	switch {
	case e.Type == "":
		return nil, models.Invalid("type", "type is required (one of used, helpful, ignored, dismissed)")
	case !e.Type.Valid():
		return nil, models.Invalid("type", "unknown event type %q (one of used, helpful, ignored, dismissed)", models.Clip(string(e.Type), 40))
	}
	if e.SurfacingID == "" {
		switch {
		case e.MemoryID == "":
			return nil, models.Invalid("surfacing_id", "surfacing_id is required, or memory_id with conversation_id")
		case e.ConversationID == "":
			return nil, models.Invalid("conversation_id", "conversation_id is required with memory_id when no surfacing_id is given")
		}
	}
	switch at := e.At; {
	case at.IsZero():
	case at.After(now.Add(s.maxSkew)):
		return nil, models.Invalid("at", "at %s is more than %s ahead of the server's clock (%s)",
			at.UTC().Format(time.RFC3339), s.maxSkew, now.Format(time.RFC3339))
	case at.Before(minEventTime):
		return nil, models.Invalid("at", "at %s is before 1970", at.UTC().Format(time.RFC3339))
	}
	if len(e.Concepts) > models.MaxListItems {
		return nil, models.Invalid("concepts", "at most %d concepts, got %d", models.MaxListItems, len(e.Concepts))
	}
	for i, c := range e.Concepts {
		if strings.TrimSpace(c) == "" || len(c) > models.MaxListItemBytes || !utf8.ValidString(c) {
			return nil, models.Invalid(fmt.Sprintf("concepts[%d]", i), "a concept must be non-empty UTF-8 text of at most %d bytes", models.MaxListItemBytes)
		}
	}
	out := *e
	out.Namespace = ns
	if !out.At.IsZero() {
		out.At = out.At.UTC()
	}
	out.Concepts = append([]string(nil), e.Concepts...)
	out.Implicit = false
	return &out, nil
}

// asError returns err as a *models.Error (every error check and apply reject with is one).
func asError(err error) *models.Error {
	if e, ok := err.(*models.Error); ok {
		return e
	}
	return &models.Error{Code: models.ErrorCode(err), Message: models.ErrorMessage(err), Field: models.ErrorField(err)}
}
