package engagement

import (
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

// FuzzCheck feeds arbitrary events to the per-event validation: it must never panic, must
// reject with EINVALID naming a field, and what it accepts must be storable as it is (a
// known type, an id, a surfacing or memory and conversation, a time within the skew, valid
// concepts). Run it with go test -run=^$ -fuzz=^FuzzCheck$ -fuzztime=30s ./engagement
func FuzzCheck(f *testing.F) {
	f.Add("e1", "s1", "", "", "used", int64(0), "berlin,moving")
	f.Add("e2", "", "m1", "c1", "dismissed", int64(-3600), "")
	f.Add("", "s1", "", "", "used", int64(0), "")
	f.Add("e3", "", "m1", "", "helpful", int64(301), "x")
	f.Add("e4", "s", "", "", "liked", int64(0), " ")
	f.Add("implicit:s1", "s1", "", "", "used", int64(0), "")
	f.Add(strings.Repeat("x", 201), "s", "", "", "ignored", int64(-1e10), "\xff")
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	s := NewService(nil, ServiceOptions{Now: func() time.Time { return now }})
	f.Fuzz(func(t *testing.T, id, surfacing, memory, conv, typ string, offset int64, concepts string) {
		e := &models.Event{ID: id, SurfacingID: surfacing, MemoryID: memory, ConversationID: conv, Type: models.EventType(typ)}
		if offset != 0 {
			e.At = now.Add(time.Duration(offset) * time.Second)
		}
		if concepts != "" {
			e.Concepts = strings.Split(concepts, ",")
		}
		got, err := s.check("ns", e, now)
		if err != nil {
			if models.ErrorCode(err) != models.EINVALID || models.ErrorField(err) == "" || models.ErrorMessage(err) == "" {
				t.Fatalf("error %v is not EINVALID with a field and a message", err)
			}
			return
		}
		switch {
		case got.Namespace != "ns", got.ID == "", len(got.ID) > models.MaxIDBytes, !got.Type.Valid():
			t.Fatalf("accepted %+v", got)
		case got.SurfacingID == "" && (got.MemoryID == "" || got.ConversationID == ""):
			t.Fatalf("accepted an event tied to nothing: %+v", got)
		case !got.At.IsZero() && (got.At.After(now.Add(DefaultMaxSkew)) || got.At.Before(minEventTime) || got.At.Location() != time.UTC):
			t.Fatalf("accepted time %v", got.At)
		case got.At.IsZero() != (offset == 0): // a zero time stays zero: apply dates it
			t.Fatalf("time %v for offset %d", got.At, offset)
		case strings.HasPrefix(got.ID, ImplicitPrefix) || got.Implicit:
			t.Fatalf("accepted an implicit event from a reporter: %+v", got)
		case len(got.Concepts) > models.MaxListItems:
			t.Fatalf("accepted %d concepts", len(got.Concepts))
		}
	})
}
