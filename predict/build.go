package predict

import (
	"sort"
	"time"
)

// Turn is one recorded turn of a conversation: its context concepts.
type Turn struct {
	ConversationID string
	TurnID         string
	At             time.Time
	Concepts       []string
}

// Use is a memory used (or found helpful) in a turn.
type Use struct {
	MemoryID       string
	ConversationID string
	TurnID         string
}

// Build learns the topic-transition model and the usage patterns from a log of turns, in any
// order: the turns are grouped by conversation and put in time order (ties by turn id), each
// is learned with the turns before it (Transitions.Learn), and each use is recorded with the
// concepts of the turns before its turn (Usage.Record). A turn without a conversation id
// cannot be placed in one and is skipped; so is a use of a turn not in the log. The models
// are a pure function of the log, so every server that reads the same log builds the same
// ones.
func Build(turns []Turn, uses []Use) (*Transitions, *Usage) {
	tr, us := NewTransitions(), NewUsage()
	byConv := map[string][]Turn{}
	for _, t := range turns {
		if t.ConversationID != "" {
			byConv[t.ConversationID] = append(byConv[t.ConversationID], t)
		}
	}
	convs := make([]string, 0, len(byConv))
	for c := range byConv {
		convs = append(convs, c)
	}
	sort.Strings(convs) // the float sums do not depend on map order
	type place struct {
		conv string
		i    int
	}
	at := map[[2]string]place{}
	for _, c := range convs {
		ts := byConv[c]
		sort.SliceStable(ts, func(i, j int) bool {
			if !ts[i].At.Equal(ts[j].At) {
				return ts[i].At.Before(ts[j].At)
			}
			return ts[i].TurnID < ts[j].TurnID
		})
		hist := make([][]string, 0, len(ts))
		for i, t := range ts {
			tr.Learn(hist, t.Concepts)
			hist = append(hist, t.Concepts)
			at[[2]string{c, t.TurnID}] = place{c, i}
		}
	}
	for _, u := range uses {
		p, ok := at[[2]string{u.ConversationID, u.TurnID}]
		if !ok || u.MemoryID == "" {
			continue
		}
		ts := byConv[p.conv]
		hist := make([][]string, 0, p.i)
		for _, t := range ts[:p.i] {
			hist = append(hist, t.Concepts)
		}
		us.Record(u.MemoryID, hist)
	}
	return tr, us
}
