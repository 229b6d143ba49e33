// Package ids makes Salience's identifiers: ULIDs, which sort by creation time and never
// contain ':' (so they can't be mistaken for concept node ids).
package ids

import (
	"strconv"
	"time"

	"github.com/oklog/ulid/v2"
)

// New returns a new ULID string for time t. Safe for concurrent use; ids made in the same
// millisecond still sort in the order they were made.
func New(t time.Time) string { return ulid.MustNewDefault(t).String() }

// Chunk returns the id of chunk i of the memory parentID.
func Chunk(parentID string, i int) string { return parentID + "-" + strconv.Itoa(i) }

// Parent returns the parent id of a chunk id made by Chunk, and false for any other id.
// ULIDs never contain '-', so the last '-' followed by digits marks a chunk.
func Parent(id string) (string, bool) {
	i := len(id) - 1
	for i >= 0 && id[i] >= '0' && id[i] <= '9' {
		i--
	}
	if i <= 0 || i == len(id)-1 || id[i] != '-' {
		return "", false
	}
	return id[:i], true
}

// MemoryOf maps an indexed unit id — a memory's or one of its chunks' — to the id of the
// memory it belongs to. It is the one chunk → parent resolution: recall, engagement and the
// stores all call it.
func MemoryOf(unit string) string {
	if p, ok := Parent(unit); ok {
		return p
	}
	return unit
}
