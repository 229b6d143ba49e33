package models

import (
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
		if !t.t.IsZero() && !(t.t.After(storeMinTime) && t.t.Before(storeMaxTime)) {
			return Invalid(field+"."+t.name, "time %s is outside the years 1678–2262", t.t.Format(time.RFC3339))
		}
	}
	for _, f := range []float64{m.Importance, m.Confidence, m.RecentDismissals} {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return Invalid(field, "importance, confidence and recent_dismissals must be finite")
		}
	}
	return nil
}
