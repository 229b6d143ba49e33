package storetest

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

// testDecisions covers the threshold bandit's records: decisions written and read inside
// Update, listed oldest first with the pending and time filters, isolated by namespace; and
// no update lost between concurrent read-modify-writes of one state key inside Update (the
// bandit's posterior).
func testDecisions(t *testing.T, open func(t *testing.T) models.Store) {
	s := open(t)
	dec := func(namespace, turn string, minute int) *models.Decision {
		return &models.Decision{Namespace: namespace, TurnID: turn, ConversationID: "c1", ConvType: models.ConvDebugging,
			Variant: "v1", Policy: "bandit", Arm: 1, Threshold: 0.6, Prob: 0.42, Surfaced: 2, At: at(minute),
			Concepts: []string{"kubernetes", turn}}
	}
	t.Run("PutGetFind", func(t *testing.T) {
		// Written out of order, to prove the sort.
		for _, d := range []*models.Decision{dec(ns, "t3", 3), dec(ns, "t1", 1), dec(ns, "t2", 2), dec(other, "t1", 1)} {
			mustNil(t, s.Update(ctx, func(tx models.Tx) error { return tx.PutDecision(d) }))
		}
		var got *models.Decision
		mustNil(t, s.Update(ctx, func(tx models.Tx) error {
			var err error
			got, err = tx.GetDecision(ns, "t2")
			return err
		}))
		assertEqual(t, "decision", got, dec(ns, "t2", 2))
		// Rewarding replaces the record.
		rewarded := dec(ns, "t1", 1)
		rewarded.Rewarded, rewarded.Reward, rewarded.RewardedAt = true, 0.4, at(40)
		mustNil(t, s.Update(ctx, func(tx models.Tx) error { return tx.PutDecision(rewarded) }))
		all, err := s.FindDecisions(ctx, models.DecisionFilter{Namespace: ns})
		mustNil(t, err)
		assertEqual(t, "all", all, []*models.Decision{rewarded, dec(ns, "t2", 2), dec(ns, "t3", 3)})
		pending, err := s.FindDecisions(ctx, models.DecisionFilter{Namespace: ns, Pending: true, Before: at(3)})
		mustNil(t, err)
		assertEqual(t, "pending before minute 3", pending, []*models.Decision{dec(ns, "t2", 2)})
		one, err := s.FindDecisions(ctx, models.DecisionFilter{Namespace: ns, Limit: 1})
		mustNil(t, err)
		if len(one) != 1 || one[0].TurnID != "t1" {
			t.Errorf("limit 1: %v, want t1", one)
		}
		// Desc: the latest first, so Limit keeps the newest (proactive prediction's turn log).
		latest, err := s.FindDecisions(ctx, models.DecisionFilter{Namespace: ns, Desc: true, Limit: 2})
		mustNil(t, err)
		assertEqual(t, "latest two", latest, []*models.Decision{dec(ns, "t3", 3), dec(ns, "t2", 2)})
		// Equal times order by turn id, descending too.
		mustNil(t, s.Update(ctx, func(tx models.Tx) error { return tx.PutDecision(dec(ns, "t4", 3)) }))
		latest, err = s.FindDecisions(ctx, models.DecisionFilter{Namespace: ns, Desc: true, Before: at(3).Add(time.Second)})
		mustNil(t, err)
		assertEqual(t, "newest first, ties by turn id", latest, []*models.Decision{dec(ns, "t4", 3), dec(ns, "t3", 3), dec(ns, "t2", 2), rewarded})
		// A decision without concepts reads back without them.
		bare := dec(ns, "t5", 5)
		bare.Concepts = nil
		mustNil(t, s.Update(ctx, func(tx models.Tx) error { return tx.PutDecision(bare) }))
		mustNil(t, s.Update(ctx, func(tx models.Tx) error {
			got, err := tx.GetDecision(ns, "t5")
			if err == nil {
				assertEqual(t, "decision without concepts", got, bare)
			}
			return err
		}))
		err = s.Update(ctx, func(tx models.Tx) error {
			_, err := tx.GetDecision(other, "t2")
			return err
		})
		wantCode(t, err, models.ENOTFOUND)
		_, err = s.FindDecisions(ctx, models.DecisionFilter{})
		wantCode(t, err, models.EINVALID)
		bad := dec(ns, "t9", 9)
		bad.Prob = 2
		wantCode(t, s.Update(ctx, func(tx models.Tx) error { return tx.PutDecision(bad) }), models.EINVALID)
		wantCode(t, s.Update(ctx, func(tx models.Tx) error { return tx.PutDecision(dec(ns, "", 1)) }), models.EINVALID)
	})
	t.Run("TxStateSerializable", func(t *testing.T) {
		goroutines, increments := 8, 50
		if testing.Short() {
			increments = 10
		}
		var wg sync.WaitGroup
		errs := make(chan error, goroutines)
		for range goroutines {
			wg.Go(func() {
				for range increments {
					err := s.Update(ctx, func(tx models.Tx) error {
						v, err := tx.GetState("bandit/counter")
						if err != nil {
							return err
						}
						n, _ := strconv.Atoi(v)
						return tx.SetState("bandit/counter", strconv.Itoa(n+1))
					})
					if err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("Update: %v", err)
		}
		v, err := s.GetState(ctx, "bandit/counter")
		mustNil(t, err)
		if want := strconv.Itoa(goroutines * increments); v != want {
			t.Fatalf("counter = %s, want %s: updates were lost", v, want)
		}
	})
}
