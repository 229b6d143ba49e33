package maintenance

import (
	"context"
	"slices"
	"time"

	"github.com/salience-ai/salience/decay"
	"github.com/salience-ai/salience/models"
)

// scanRule numbers the queueing rule; a checkpoint of another rule is not resumed. 2: only
// memories that earned it (decay.Resurface, issue 45); before it every due memory.
const scanRule = 2

// candidate is a due memory found by the decay scan.
type candidate struct {
	ID    string    `json:"id"`
	Due   time.Time `json:"due"`
	Score float64   `json:"score"`
}

// scanCursor is decay-scan's checkpoint: the namespace in progress, how far its memories
// were read, and the best candidates so far (so a resumed scan keeps the same top of the
// queue). Done means the namespace's queue was written. Rule is the queueing rule it was
// gathered under (scanRule).
type scanCursor struct {
	Rule int         `json:"rule"`
	NS   string      `json:"ns"`
	Pos  position    `json:"pos"`
	Top  []candidate `json:"top,omitempty"`
	Done bool        `json:"done,omitempty"`
}

// usable reports whether the queue the cursor has gathered is one the store would take:
// every candidate a valid queue item of the cursor's namespace. A checkpoint is read back
// from the store and may be damaged or come from another version; one that fails here
// would fail the run at its end, at every retry (found by FuzzCheckpoints).
func (c *scanCursor) usable(now time.Time) bool {
	if c.NS != "" && c.Rule != scanRule {
		return false // gathered under another rule: the next scan applies this one everywhere
	}
	for _, t := range c.Top {
		it := &models.ResurfaceItem{Namespace: c.NS, MemoryID: t.ID, DueAt: t.Due, Score: t.Score, QueuedAt: now}
		if models.ValidateResurfaceItem(it, "top") != nil {
			return false
		}
	}
	return true
}

// DecayScan is the decay-scan job: for each namespace it walks the memories in batches, asks
// decay.Resurface under the namespace's decay policy which belong in the queue at the run's
// now — due, and used or marked important, never a turn that was only said — and makes the
// namespace's resurfacing queue exactly its QueueCap of highest value (decay.Resurface's
// Worth × forgotten): those are enqueued (keeping their first QueuedAt), anything else
// queued is dequeued — a memory used since, dismissed since, deleted, queued by an earlier
// rule, or pushed out by more valuable ones. Never queued: chunks, sensitive memories
// (never volunteered ambiently), facts that stopped being true, and memories whose dismissal
// cooldown has not ended. Running it twice at one time gives the same queue. Items is the
// number of memories queued.
func (s *Service) DecayScan(ctx context.Context, run Run) (int, error) {
	now := run.Now().UTC()
	var cur scanCursor
	if _, err := loadCheckpoint(run, "cursor", &cur); err != nil {
		return 0, err
	}
	if !cur.usable(now) {
		cur = scanCursor{} // damaged, or from another version: the scan starts over
	}
	nss, err := s.namespaces(ctx, cur.NS)
	if err != nil {
		return 0, err
	}
	items := 0
	for _, ns := range nss {
		if ns != cur.NS {
			cur = scanCursor{Rule: scanRule, NS: ns}
		}
		if cur.Done {
			continue
		}
		n, err := s.scanNamespace(ctx, run, &cur, now)
		items += n
		if err != nil {
			return items, err
		}
	}
	return items, saveCheckpoint(run, "cursor", nil)
}

// scanNamespace finishes the scan of cur.NS from cur.Pos.
func (s *Service) scanNamespace(ctx context.Context, run Run, cur *scanCursor, now time.Time) (int, error) {
	ns := cur.NS
	pol := s.policy(ns)
	err := s.walkMemories(ctx, ns, cur.Pos, func(ms []*models.Memory, last position) error {
		for _, m := range ms {
			if c, ok := dueCandidate(pol, m, now); ok {
				cur.Top = pushTop(cur.Top, c, s.queueCap)
			}
		}
		cur.Pos = last
		return saveCheckpoint(run, "cursor", cur)
	})
	if err != nil {
		return 0, err
	}
	// Dequeue and enqueue go together even when a stop arrives in between.
	if err := s.replaceQueue(context.WithoutCancel(ctx), ns, cur.Top, now); err != nil {
		return 0, err
	}
	n := len(cur.Top)
	*cur = scanCursor{Rule: scanRule, NS: ns, Done: true}
	s.log.Info("decay-scan: namespace queued", "namespace", ns, "policy", pol.Name(), "queued", n)
	return n, saveCheckpoint(run, "cursor", cur)
}

// dueCandidate decides whether m belongs in the resurfacing queue at now and with which
// value: the rule is decay.Resurface's.
func dueCandidate(pol decay.Policy, m *models.Memory, now time.Time) (candidate, bool) {
	value, due, ok := decay.Resurface(pol, m, now)
	if !ok {
		return candidate{}, false
	}
	return candidate{ID: m.ID, Due: due, Score: value}, true
}

// pushTop inserts c into top, kept sorted by score (highest first, then id) and at most
// limit long.
func pushTop(top []candidate, c candidate, limit int) []candidate {
	i, _ := slices.BinarySearchFunc(top, c, compareCandidates)
	if i >= limit {
		return top
	}
	top = slices.Insert(top, i, c)
	if len(top) > limit {
		top = top[:limit]
	}
	return top
}

func compareCandidates(a, b candidate) int {
	switch {
	case a.Score > b.Score:
		return -1
	case a.Score < b.Score:
		return 1
	case a.ID < b.ID:
		return -1
	case a.ID > b.ID:
		return 1
	}
	return 0
}

// replaceQueue makes ns's queue exactly top: queued items not in top are removed, items of
// top are added or updated, keeping the QueuedAt of those already queued.
func (s *Service) replaceQueue(ctx context.Context, ns string, top []candidate, now time.Time) error {
	queued, err := s.store.Queue(ctx, ns, 0)
	if err != nil {
		return err
	}
	since := make(map[string]time.Time, len(queued))
	for _, it := range queued {
		since[it.MemoryID] = it.QueuedAt
	}
	keep := make(map[string]bool, len(top))
	items := make([]*models.ResurfaceItem, len(top))
	for i, c := range top {
		keep[c.ID] = true
		at, ok := since[c.ID]
		if !ok || at.IsZero() {
			at = now
		}
		items[i] = &models.ResurfaceItem{Namespace: ns, MemoryID: c.ID, DueAt: c.Due, Score: c.Score, QueuedAt: at}
	}
	var drop []string
	for _, it := range queued {
		if !keep[it.MemoryID] {
			drop = append(drop, it.MemoryID)
		}
	}
	if err := s.store.Dequeue(ctx, ns, drop); err != nil {
		return err
	}
	return s.store.Enqueue(ctx, items)
}
