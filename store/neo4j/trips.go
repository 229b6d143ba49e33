package neo4j

import "sync/atomic"

// tripLog counts the round trips one session makes, from the Bolt messages the driver logs
// (a neo4j log.BoltLogger): a round trip starts when the client sends after having read (or
// first), so messages pipelined together (BEGIN, RUN and PULL) count once and a COMMIT
// waited for counts again. It is the driver's own account of the wire, not a guess from the
// queries. A session uses one connection at a time, from one goroutine, so sending needs no
// lock.
type tripLog struct {
	sending bool
	total   *atomic.Int64
}

func (l *tripLog) LogClientMessage(_, _ string, _ ...any) {
	if !l.sending {
		l.sending = true
		l.total.Add(1)
	}
}

func (l *tripLog) LogServerMessage(_, _ string, _ ...any) { l.sending = false }

// RoundTrips returns how many round trips to Neo4j this store's sessions have made since it
// opened (connection handshakes aside), as the driver's Bolt messages show them.
func (s *Store) RoundTrips() int64 { return s.trips.Load() }
