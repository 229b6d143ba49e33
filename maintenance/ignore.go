package maintenance

import (
	"context"
	"time"

	"github.com/salience-ai/salience/models"
)

// ImplicitPrefix starts the id of every event the implicit-ignore job writes: the event of
// surfacing S is "implicit:S", so a rerun finds it logged and changes nothing.
const ImplicitPrefix = "implicit:"

// ignoreCursor is implicit-ignore's checkpoint: the last surfacing handled, in (At, ID)
// order, so orphans (surfacings whose memory was deleted) are not read again on every run.
type ignoreCursor struct {
	At time.Time `json:"at"`
	ID string    `json:"id"`
}

// ImplicitIgnore is the implicit-ignore job: every surfacing, in any namespace, shown more
// than IgnoreAfter before the run's now and still without an outcome becomes an `ignored`
// event (Implicit, id "implicit:<surfacing id>", at the surfacing's time: the turn in which
// the bot passed it over). Applying it is what engagement does for an ignored event: the
// memory's confidence and RecentDismissals move by the engagement rules, its schedule by
// the namespace's decay policy (FSRS grade Hard), and the surfacing's outcome becomes
// ignored — in one transaction per batch, re-checking that no report arrived meanwhile. A
// surfacing whose memory was deleted still gets its event and outcome. Items is the number
// of events written.
//
// The job applies the rules itself rather than through engagement.Service.Apply: that call
// rejects an event whose memory is gone, which would leave such surfacings without an
// outcome, to be retried forever; ignored events strengthen no edges, so nothing else of
// the service's work applies.
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

// ignore writes the implicit events of the surfacings, grouped by namespace, one
// transaction per namespace, and returns how many events were written.
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
		pol := s.policy(ns)
		var n int
		err := s.store.Update(ctx, func(tx models.Tx) error {
			n = 0
			for _, seen := range byNS[ns] {
				sf, err := tx.GetSurfacing(ns, seen.ID)
				switch {
				case models.ErrorCode(err) == models.ENOTFOUND:
					continue
				case err != nil:
					return err
				}
				if sf.Outcome != "" {
					continue // a report arrived after we listed it
				}
				at := sf.At
				ev := &models.Event{ID: ImplicitPrefix + sf.ID, Namespace: ns, SurfacingID: sf.ID, MemoryID: sf.MemoryID,
					ConversationID: sf.ConversationID, Type: models.EventIgnored, At: at, Concepts: sf.Concepts, Implicit: true}
				switch err := tx.InsertEvent(ev); {
				case models.ErrorCode(err) == models.EDUPLICATE:
					continue // logged by an earlier run whose outcome write was lost; nothing to redo
				case err != nil:
					return err
				}
				m, err := tx.GetMemory(ns, sf.MemoryID)
				switch {
				case models.ErrorCode(err) == models.ENOTFOUND:
				case err != nil:
					return err
				default:
					s.rules.ApplyToMemory(m, models.EventIgnored, sf.Concepts, at)
					pol.OnEvent(m, models.EventIgnored, at)
					if err := tx.PutMemory(m); err != nil {
						return err
					}
				}
				sf.Outcome, sf.OutcomeAt = models.EventIgnored, at
				if err := tx.PutSurfacing(sf); err != nil {
					return err
				}
				n++
			}
			return nil
		})
		if err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}
