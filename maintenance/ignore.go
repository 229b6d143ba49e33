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
// than IgnoreAfter before the run's now and still without an outcome becomes an `ignored`
// event, applied by engagement.Service.ApplyImplicit — the same function that applies the
// bots' reports (the memory's confidence and counters by the engagement rules, its schedule
// by the namespace's decay policy, the surfacing's outcome), one transaction per namespace
// and batch, re-checking that no report arrived meanwhile. A surfacing whose memory was
// deleted still gets its event and outcome. A report that arrives later replaces the
// outcome (engagement.Service.Apply). Items is the number of events written.
func (s *Service) ImplicitIgnore(ctx context.Context, run Run) (int, error) {
	cutoff := run.Now().UTC().Add(-s.ignoreAfter)
	var cur ignoreCursor
	if _, err := loadCheckpoint(run, "cursor", &cur); err != nil {
		return 0, err
	}
	items := 0
	for {
		if err := ctx.Err(); err != nil {
			return items, err
		}
		if !cur.At.Before(cutoff) {
			return items, nil
		}
		ss, err := s.store.FindSurfacings(ctx, models.SurfacingFilter{NoOutcome: true, Since: cur.At, Until: cutoff, Limit: s.batch})
		if err != nil {
			return items, err
		}
		var todo []*models.Surfacing
		for _, sf := range ss {
			if sf.At.After(cur.At) || (sf.At.Equal(cur.At) && sf.ID > cur.ID) {
				todo = append(todo, sf)
			}
		}
		if len(todo) > 0 {
			n, err := s.ignore(ctx, todo)
			items += n
			if err != nil {
				return items, err
			}
			last := todo[len(todo)-1]
			cur = ignoreCursor{At: last.At, ID: last.ID}
			if err := saveCheckpoint(run, "cursor", cur); err != nil {
				return items, err
			}
		}
		// Every surfacing handled above now has an outcome, so a full page means more may
		// follow; a page of nothing but already-handled ones cannot recur, as those gained
		// their outcome.
		if len(ss) < s.batch || len(todo) == 0 {
			return items, nil
		}
	}
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
