package maintenance

import (
	"context"
	"time"

	"github.com/salience-ai/salience/models"
)

// ignoreCursor is implicit-ignore's checkpoint: the last surfacing handled, in (At, ID)
// order, so orphans (surfacings whose memory was deleted) are not read again on every run.
type ignoreCursor struct {
	At time.Time `json:"at"`
	ID string    `json:"id"`
}

// ImplicitIgnore is the implicit-ignore job: every surfacing, in any namespace, shown more
// than its namespace's timeout before the run's now (the settings' implicit_ignore_after_hours,
// else IgnoreAfter) and still without an outcome becomes an `ignored` event, applied by
// engagement.Service.ApplyImplicit — the same function that applies the bots' reports (the
// memory's confidence and counters by the engagement rules, its schedule by the namespace's
// decay policy, the surfacing's outcome), one transaction per namespace and batch,
// re-checking that no report arrived meanwhile. A surfacing whose memory was deleted still
// gets its event and outcome. A report that arrives later replaces the outcome
// (engagement.Service.Apply). Items is the number of events written.
//
// The walk reads every namespace's surfacings in (At, ID) order up to the shortest timeout
// of any namespace holding memories; one still inside its own namespace's longer timeout is
// passed over, and the checkpoint stays before it, so the next run sees it again. (A
// namespace whose memories were all deleted is not listed: a shorter timeout of its own
// applies from the shortest of the others on.)
func (s *Service) ImplicitIgnore(ctx context.Context, run Run) (int, error) {
	now := run.Now().UTC()
	after := s.ignoreAfters(ctx)
	shortest, err := s.shortestIgnoreAfter(ctx, after)
	if err != nil {
		return 0, err
	}
	cutoff := now.Add(-shortest)
	var cur ignoreCursor
	if _, err := loadCheckpoint(run, "cursor", &cur); err != nil {
		return 0, err
	}
	// pos is how far the walk has read; cur, the checkpoint, how far every surfacing is
	// handled. They part at the first surfacing still inside its namespace's timeout.
	pos, held := cur, false
	items := 0
	for {
		if err := ctx.Err(); err != nil {
			return items, err
		}
		if !pos.At.Before(cutoff) {
			return items, nil
		}
		ss, err := s.store.FindSurfacings(ctx, models.SurfacingFilter{NoOutcome: true, Since: pos.At, Until: cutoff, Limit: s.batch})
		if err != nil {
			return items, err
		}
		var todo []*models.Surfacing
		next, fresh := cur, 0
		for _, sf := range ss {
			if !sf.At.After(pos.At) && !(sf.At.Equal(pos.At) && sf.ID > pos.ID) {
				continue
			}
			fresh++
			pos = ignoreCursor{At: sf.At, ID: sf.ID}
			if !sf.At.Before(now.Add(-after(sf.Namespace))) {
				held = true // not due yet: seen again by the next run
				continue
			}
			todo = append(todo, sf)
			if !held {
				next = pos
			}
		}
		if len(todo) > 0 {
			n, err := s.ignore(ctx, todo)
			items += n
			if err != nil {
				return items, err
			}
		}
		if next != cur {
			cur = next
			if err := saveCheckpoint(run, "cursor", cur); err != nil {
				return items, err
			}
		}
		// Every surfacing handled above now has an outcome and one passed over is behind
		// pos, so a full page means more may follow; a page of nothing past pos cannot
		// recur.
		if len(ss) < s.batch || fresh == 0 {
			return items, nil
		}
	}
}

// ignoreAfters returns the implicit-ignore timeout of each namespace, read once per
// namespace and run.
func (s *Service) ignoreAfters(ctx context.Context) func(ns string) time.Duration {
	seen := map[string]time.Duration{}
	return func(ns string) time.Duration {
		d, ok := seen[ns]
		if !ok {
			d = s.ignoreAfterOf(ctx, ns)
			seen[ns] = d
		}
		return d
	}
}

// shortestIgnoreAfter is the shortest implicit-ignore timeout of IgnoreAfter and the
// namespaces that hold memories: no surfacing shown more recently is due anywhere.
func (s *Service) shortestIgnoreAfter(ctx context.Context, after func(ns string) time.Duration) (time.Duration, error) {
	shortest := s.ignoreAfter
	if s.settings == nil {
		return shortest, nil
	}
	nss, err := s.store.Namespaces(ctx)
	if err != nil {
		return 0, err
	}
	for _, ns := range nss {
		shortest = min(shortest, after(ns))
	}
	return shortest, nil
}

// ignoreAfterOf returns ns's implicit-ignore timeout: its settings', else IgnoreAfter.
// Settings that cannot be read fall back to IgnoreAfter (and are logged).
func (s *Service) ignoreAfterOf(ctx context.Context, ns string) time.Duration {
	if s.settings == nil {
		return s.ignoreAfter
	}
	st, err := s.settings.For(ctx, ns)
	if err != nil {
		s.log.Warn("namespace settings unreadable; using the default implicit-ignore timeout", "namespace", ns, "error", err)
		return s.ignoreAfter
	}
	return st.IgnoreAfter(s.ignoreAfter)
}

// ignore writes the implicit events of the surfacings, one ApplyImplicit call per
// namespace, and returns how many events were written.
func (s *Service) ignore(ctx context.Context, ss []*models.Surfacing) (int, error) {
	byNS := map[string][]*models.Surfacing{}
	var order []string
	for _, sf := range ss {
		if byNS[sf.Namespace] == nil {
			order = append(order, sf.Namespace)
		}
		byNS[sf.Namespace] = append(byNS[sf.Namespace], sf)
	}
	total := 0
	for _, ns := range order {
		res, err := s.engagement.ApplyImplicit(ctx, ns, byNS[ns])
		if err != nil {
			return total, err
		}
		total += res.Applied
	}
	return total, nil
}
