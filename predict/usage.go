package predict

import "sort"

// Usage holds the usage patterns of docs/design.md#prediction-and-thresholds: for each memory, the concepts seen 1–Window
// turns before it was used and how many turns before (the lead time). A concept that keeps
// preceding a memory's use is a learned trigger for it: proactive surfacing counts it as a
// trigger match (gate 2). Not safe for concurrent use.
type Usage struct {
	Window   int                     `json:"window"`
	Memories map[string]*MemoryUsage `json:"memories"`
}

// MemoryUsage is one memory's pattern.
type MemoryUsage struct {
	Uses   int                      `json:"uses"`
	Before map[string]*ConceptUsage `json:"before"`
}

// ConceptUsage counts the uses a concept preceded and the sum of its lead times (turns from
// its latest appearance in the window to the use).
type ConceptUsage struct {
	Count   int `json:"count"`
	LeadSum int `json:"lead_sum"`
}

// NewUsage returns empty usage patterns with the 3-turn window.
func NewUsage() *Usage {
	return &Usage{Window: TransitionWindow, Memories: map[string]*MemoryUsage{}}
}

// Record notes that memory id was used in the newest turn; hist are the concept sets of the
// turns before it, oldest first (only the last Window matter). A concept counts once per use,
// with the lead of its latest appearance (1 = the turn just before).
func (u *Usage) Record(id string, hist [][]string) {
	w := u.Window
	if w <= 0 {
		w = TransitionWindow
	}
	mu := u.Memories[id]
	if mu == nil {
		mu = &MemoryUsage{Before: map[string]*ConceptUsage{}}
		u.Memories[id] = mu
	}
	mu.Uses++
	seen := map[string]bool{}
	for lead := 1; lead <= w && lead <= len(hist); lead++ {
		for _, c := range hist[len(hist)-lead] {
			if c == "" || seen[c] {
				continue
			}
			seen[c] = true
			cu := mu.Before[c]
			if cu == nil {
				cu = &ConceptUsage{}
				mu.Before[c] = cu
			}
			cu.Count++
			cu.LeadSum += lead
		}
	}
}

// Triggers returns the concepts that preceded at least minShare of the memory's uses (and at
// least two of them: one use is an anecdote), most frequent first, ties by name.
func (u *Usage) Triggers(id string, minShare float64) []string {
	mu := u.Memories[id]
	if mu == nil || mu.Uses == 0 {
		return nil
	}
	var out []string
	for c, cu := range mu.Before {
		if cu.Count >= 2 && float64(cu.Count) >= minShare*float64(mu.Uses) {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		ci, cj := mu.Before[out[i]].Count, mu.Before[out[j]].Count
		if ci != cj {
			return ci > cj
		}
		return out[i] < out[j]
	})
	return out
}

// Lead is the mean lead time in turns of the memory's triggers (Triggers with minShare):
// how far ahead of its use the context usually announces it; 0 when it has none.
func (u *Usage) Lead(id string, minShare float64) float64 {
	mu := u.Memories[id]
	n, sum := 0, 0
	for _, c := range u.Triggers(id, minShare) {
		n += mu.Before[c].Count
		sum += mu.Before[c].LeadSum
	}
	if n == 0 {
		return 0
	}
	return float64(sum) / float64(n)
}
