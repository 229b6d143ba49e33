package models

import (
	"errors"
	"math"
	"strings"
	"time"
)

// Times a store can hold: nanoseconds since 1970 in an int64, as both stores keep them.
var (
	storeMinTime = time.Unix(0, math.MinInt64+1).UTC()
	storeMaxTime = time.Unix(0, math.MaxInt64).UTC()
)

// ValidateStoredMemory checks what every store relies on before it writes a memory (content
// rules are ingest's, Memory.Validate). One function, so SQLite and Neo4j refuse the same
// memories with the same fields.
func ValidateStoredMemory(m *Memory, field string) error {
	if m == nil {
		return Invalid(field, "memory is missing")
	}
	if err := ValidateNamespace(m.Namespace); err != nil {
		return WithFieldPrefix(err, field+".")
	}
	if m.ID == "" {
		return Invalid(field+".id", "id is required")
	}
	if len(m.ID) > MaxIDBytes {
		return Invalid(field+".id", "id is longer than %d bytes", MaxIDBytes)
	}
	// Concept node ids start with "c:"; memory ids never hold ':' so the two cannot collide.
	if strings.ContainsRune(m.ID, ':') {
		return Invalid(field+".id", "memory ids must not contain ':'")
	}
	if !m.Kind.Valid() {
		return Invalid(field+".kind", "unknown kind %q", m.Kind)
	}
	if m.CreatedAt.IsZero() {
		return Invalid(field+".created_at", "created_at is required")
	}
	for _, t := range []struct {
		name string
		t    time.Time
	}{
		{"created_at", m.CreatedAt}, {"valid_at", m.ValidAt}, {"invalid_at", m.InvalidAt},
		{"last_used", m.LastUsed}, {"last_surfaced", m.LastSurfaced},
	} {
		if err := checkStoredTime(field+"."+t.name, t.t); err != nil {
			return err
		}
	}
	for _, f := range []float64{m.Importance, m.Confidence, m.RecentDismissals} {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return Invalid(field, "importance, confidence and recent_dismissals must be finite")
		}
	}
	return nil
}

// ValidatePutEdge checks an edge a transaction is asked to write (Tx.PutEdge): present, of
// a valid namespace, and as ValidateStoredEdge wants it; it returns the copy to write.
func ValidatePutEdge(e *Edge) (*Edge, error) {
	if e == nil {
		return nil, Invalid("edge", "edge is missing")
	}
	if err := ValidateNamespace(e.Namespace); err != nil {
		return nil, err
	}
	return ValidateStoredEdge(e, e.Namespace, "edge")
}

// ValidateStoredEdge checks what every store relies on before it writes an edge and returns
// a copy with its namespace set to ns when empty. One function, so SQLite and Neo4j refuse
// the same edges with the same fields.
func ValidateStoredEdge(e *Edge, ns, field string) (*Edge, error) {
	if e == nil {
		return nil, Invalid(field, "edge is missing")
	}
	c := *e
	if c.Namespace == "" {
		c.Namespace = ns
	}
	switch {
	case c.Namespace != ns:
		return nil, Invalid(field+".namespace", "edge of another namespace")
	case c.From == "" || c.To == "":
		return nil, Invalid(field, "an edge needs both ends")
	case c.Type == "":
		return nil, Invalid(field+".type", "edge type is required")
	case !(c.Weight >= 0 && c.Weight <= 1):
		return nil, Invalid(field+".weight", "weight must be between 0 and 1")
	case c.CoOccurrences < 0:
		return nil, Invalid(field+".co_occurrences", "co_occurrences must not be negative")
	case hasControl(c.From) || hasControl(c.To) || hasControl(string(c.Type)) || hasControl(c.Fact):
		return nil, Invalid(field, "edge ends, type and fact must not contain control characters")
	}
	if err := errors.Join(checkStoredTime(field+".last_co_occurred", c.LastCoOccurred), checkStoredTime(field+".last_decayed", c.LastDecayed)); err != nil {
		return nil, err
	}
	return &c, nil
}

// checkStoredTime fails when t is set and outside the times a store can hold.
func checkStoredTime(field string, t time.Time) error {
	if t.IsZero() || (t.After(storeMinTime) && t.Before(storeMaxTime)) {
		return nil
	}
	return Invalid(field, "time %s is outside the years 1678–2262", t.Format(time.RFC3339))
}

// hasControl reports whether s holds an ASCII control character: the SQLite rebuild packs
// edge fields with one as separator, and Neo4j refuses the same edges so both stores agree.
func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return true
		}
	}
	return false
}
