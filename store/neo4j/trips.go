package neo4j

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/salience-ai/salience/models"
)

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

// serverCPU reads the CPU time the Neo4j server's process has used, over JMX.
const serverCPU = `CALL dbms.queryJmx('java.lang:type=OperatingSystem') YIELD attributes
	RETURN attributes.ProcessCpuTime.value AS ns`

// ServerCPU returns the CPU time the Neo4j server's process has used since it started (every
// thread: queries, commits, background work), as its JVM reports it over JMX; the server is
// the one reads go to (the leader, unless follower reads are on). Read before and after
// some calls, it tells what they cost the database, which a client's own clock cannot.
// An error when the server does not let this user query JMX.
func (s *Store) ServerCPU(ctx context.Context) (time.Duration, error) {
	var cpu time.Duration
	err := s.read(ctx, "server cpu", func(tx runner) error {
		recs, err := collect(ctx, tx, serverCPU, nil)
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			return models.Errorf(models.EINTERNAL, "neo4j: the server reports no process CPU time")
		}
		ns, ok := recs[0].Values[0].(int64)
		if !ok || ns < 0 {
			return models.Errorf(models.EINTERNAL, "neo4j: the server's process CPU time is %v", recs[0].Values[0])
		}
		cpu = time.Duration(ns)
		return nil
	})
	return cpu, err
}
