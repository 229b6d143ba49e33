package engagement

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/salience-ai/salience/decay"
	"github.com/salience-ai/salience/models"
)

// request is the checked events of one Apply or ApplyImplicit call on their way to the
// store.
type request struct {
	ctx     context.Context
	ns      string
	now     time.Time // the call's clock: the time of events reported without one
	policy  decay.Policy
	checked []*models.Event // nil where the event was rejected before
	events  int             // non-nil entries of checked
	results []EventResult   // set by the transaction that applies the request
	err     error           // the store's error, when the request could not be applied
	done    chan struct{}   // closed once results or err are set
	lead    chan struct{}   // told to write the next group
}

// maxGroupEvents bounds the events of one group transaction, so a burst does not make one
// transaction (and the wait of every request in it) arbitrarily long.
const maxGroupEvents = 5000

// write applies r and returns once r.results or r.err is set. Concurrent calls share
// transactions (group commit): while one group is written, the requests that arrive queue
// up, and the first of them then writes every queued request in one transaction. The store
// serializes writers anyway, so each request would wait for those ahead of it and pay for
// its own commit; grouped, they pay for one, and each event is still applied exactly as if
// its batch had been alone, in arrival order.
func (s *Service) write(r *request) {
	s.mu.Lock()
	s.queue = append(s.queue, r)
	if s.writing {
		s.mu.Unlock()
		select {
		case <-r.done:
			return
		case <-r.lead: // r is first in the queue: it writes the next group
		}
		s.mu.Lock()
	}
	s.writing = true
	n, events := 0, 0
	for n < len(s.queue) && (n == 0 || events+s.queue[n].events <= maxGroupEvents) {
		events += s.queue[n].events
		n++
	}
	group := slices.Clone(s.queue[:n])
	s.queue = slices.Delete(s.queue, 0, n)
	s.mu.Unlock()

	s.applyGroup(group)

	s.mu.Lock()
	if len(s.queue) > 0 {
		s.queue[0].lead <- struct{}{}
	} else {
		s.writing = false
	}
	s.mu.Unlock()
}

// applyGroup applies a group of requests in one transaction and tells each its outcome. A
// store failure fails the group; the requests are then applied one by one, so a request
// that cannot be written never fails the others.
func (s *Service) applyGroup(group []*request) {
	// The transaction serves every request of the group: one caller giving up must not
	// abort the others' writes (a request that returns early has nothing to lose either, as
	// a retry of its events reports them as duplicates).
	ctx := context.WithoutCancel(group[0].ctx)
	err := s.store.Update(ctx, func(tx models.Tx) error { return s.applyRequests(tx, group) })
	if err != nil && len(group) > 1 {
		for _, r := range group {
			r.err = s.store.Update(ctx, func(tx models.Tx) error { return s.applyRequests(tx, []*request{r}) })
		}
	} else {
		for _, r := range group {
			r.err = err
		}
	}
	for _, r := range group {
		close(r.done)
	}
}

// applyRequests applies the requests' events in order inside tx. It may run more than once
// (a store that retries transactions, or a group retried request by request), so it starts
// each request's results afresh. Requests of one namespace share a batch: a later request
// must see what an earlier one changed.
func (s *Service) applyRequests(tx models.Tx, rs []*request) error {
	batches := map[string]*batch{}
	var order []*batch
	for _, r := range rs {
		b := batches[r.ns]
		if b == nil {
			b = newBatch(tx, r.ns)
			batches[r.ns] = b
			order = append(order, b)
		}
		r.results = make([]EventResult, len(r.checked))
		if err := b.prefetch(r.checked); err != nil {
			return err
		}
		for i, ev := range r.checked {
			if ev == nil {
				continue
			}
			e := *ev
			status, rej, err := s.apply(b, r.policy, &e, r.now)
			if err != nil {
				return err
			}
			r.results[i] = EventResult{Status: status}
			if rej != nil {
				r.results[i].Err = asError(models.WithFieldPrefix(rej, fmt.Sprintf("events[%d].", i)))
			}
		}
	}
	for _, b := range order {
		if err := b.flush(); err != nil {
			return err
		}
	}
	return nil
}
