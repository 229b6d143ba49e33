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
//
// A ULID holds milliseconds since 1970 in 48 bits, so it can say nothing of a time before
// 1970 or after the year 10889; such times are clamped to the nearest end instead of
// panicking (the ulid package panics: "time too big"). The id's time is only an ordering
// key — the memory keeps its real time — so a memory dated 1850 gets an id that sorts before
// every post-1970 one, and memories clamped to the same end sort in the order they were made.
func New(t time.Time) string {
	return ulid.MustNew(timestamp(t), ulid.DefaultEntropy()).String()
}

// timestamp is t in ULID milliseconds, clamped to the range a ULID can hold.
func timestamp(t time.Time) uint64 {
	switch {
	case t.Before(minTime):
		return 0
	case t.After(maxTime):
		return ulid.MaxTime()
	}
	return ulid.Timestamp(t)
}

var (
	minTime = time.UnixMilli(0)
	maxTime = ulid.Time(ulid.MaxTime())
)

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
