package sqlite

import (
	"context"
	"slices"
	"sync"

	"github.com/salience-ai/salience/models"
)

// surfacingGroup makes concurrent RecordSurfacings calls share transactions (group commit),
// as engagement.Service.write does for events: while one group is written, the calls that
// arrive queue up, and the first of them then writes every queued call in one transaction.
// Writers are serialized anyway (Store.write), so each call would wait for those ahead of it
// and pay for its own transaction — BEGIN, COMMIT, and the WAL frames of every page it
// touched, the memories' counters included; grouped, they pay once. A call still returns
// only after the transaction holding its rows has committed, so a surfacing id a recall
// returns survives a crash of the process (the WAL append precedes the return).
type surfacingGroup struct {
	mu      sync.Mutex
	writing bool
	queue   []*surfacingReq
}

// surfacingReq is one RecordSurfacings call on its way to the database.
type surfacingReq struct {
	ctx   context.Context
	ss    []*models.Surfacing
	state *models.ConversationState
	err   error         // set by the transaction that wrote the request
	done  chan struct{} // closed once err is set
	lead  chan struct{} // told to write the next group
}

// maxGroupSurfacings bounds the surfacings of one group transaction, so a burst does not make
// one transaction (and the wait of every call in it) arbitrarily long.
const maxGroupSurfacings = 2000

// record writes r, alone or with the calls queued beside it, and returns r's error.
func (g *surfacingGroup) record(s *Store, r *surfacingReq) error {
	g.mu.Lock()
	g.queue = append(g.queue, r)
	if g.writing {
		g.mu.Unlock()
		// A queued request is written even if its caller gives up: a leader holds it by
		// then, and rows of a turn the bot never saw are harmless.
		select {
		case <-r.done:
			return r.err
		case <-r.lead: // r is first in the queue: it writes the next group
		}
		g.mu.Lock()
	}
	g.writing = true
	n, rows := 0, 0
	for n < len(g.queue) && (n == 0 || rows+len(g.queue[n].ss) <= maxGroupSurfacings) {
		rows += len(g.queue[n].ss)
		n++
	}
	group := slices.Clone(g.queue[:n])
	g.queue = slices.Delete(g.queue, 0, n)
	g.mu.Unlock()

	s.writeSurfacings(group)

	g.mu.Lock()
	if len(g.queue) > 0 {
		g.queue[0].lead <- struct{}{}
	} else {
		g.writing = false
	}
	g.mu.Unlock()
	return r.err
}

// writeSurfacings writes a group in one transaction and tells each request its outcome. When
// the group fails (say one request's surfacing id exists) the requests are written one by
// one, so a request that cannot be written never fails the others.
func (s *Store) writeSurfacings(group []*surfacingReq) {
	if len(group) == 1 {
		r := group[0]
		r.err = s.write(r.ctx, "record surfacings", func(tx *wtx) (func(), error) {
			return s.recordTx(r.ctx, tx, r.ss, r.state)
		})
		close(r.done)
		return
	}
	// The transaction serves every request of the group: one caller giving up must not
	// abort the others' writes.
	ctx := context.WithoutCancel(group[0].ctx)
	turns := make([]turn, len(group))
	for i, r := range group {
		turns[i] = turn{r.ss, r.state}
	}
	err := s.write(ctx, "record surfacings", func(tx *wtx) (func(), error) {
		return s.recordTurnsTx(ctx, tx, turns)
	})
	for _, r := range group {
		if err == nil {
			continue
		}
		r.err = s.write(ctx, "record surfacings", func(tx *wtx) (func(), error) {
			return s.recordTx(ctx, tx, r.ss, r.state)
		})
	}
	for _, r := range group {
		close(r.done)
	}
}
