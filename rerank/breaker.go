package rerank

import (
	"fmt"
	"sync"
	"time"
)

// breaker is a circuit breaker over the endpoint: it stops calls to an endpoint that is
// broken, while the latency gate stops calls to one that is slow — a timeout says the
// endpoint was slower than what was left of one budget, not that it is broken, so it
// counts here as neither success nor failure. Closed, every call may go; after
// threshold failures in a row it opens and no call goes until cooldown has passed; then it
// is half-open and lets exactly one trial call through: a success closes it, a failure
// opens it for another cooldown. Time comes from the caller, so tests move it by hand.
type breaker struct {
	threshold int
	cooldown  time.Duration

	mu       sync.Mutex
	failures int       // consecutive failures while closed
	openedAt time.Time // zero when closed
	trial    bool      // a half-open trial call is in flight
}

// breaker states, as reported in reasons and the state gauge.
const (
	stateClosed   = "closed"
	stateOpen     = "open"
	stateHalfOpen = "half-open"
)

func newBreaker(threshold int, cooldown time.Duration) *breaker {
	return &breaker{threshold: threshold, cooldown: cooldown}
}

// state returns the breaker's state at now without changing it.
func (b *breaker) state(now time.Time) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stateLocked(now)
}

func (b *breaker) stateLocked(now time.Time) string {
	switch {
	case b.openedAt.IsZero():
		return stateClosed
	case now.Sub(b.openedAt) < b.cooldown:
		return stateOpen
	}
	return stateHalfOpen
}

// permit is a call let through by acquire; its result goes back with done.
type permit struct{ trial bool }

// acquire asks to make a call at now. It refuses, with the reason, when the breaker is
// open, or half-open with its one trial already in flight.
func (b *breaker) acquire(now time.Time) (permit, bool, string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.stateLocked(now) {
	case stateOpen:
		return permit{}, false, fmt.Sprintf("circuit open after %d failures in a row; next trial in %s",
			b.threshold, ms(b.cooldown-now.Sub(b.openedAt)))
	case stateHalfOpen:
		if b.trial {
			return permit{}, false, "circuit half-open: a trial call is in flight"
		}
		b.trial = true
		return permit{trial: true}, true, ""
	}
	return permit{}, true, ""
}

// Results of a call, for done.
const (
	callOK      = iota
	callFailed  // an error or an unusable answer
	callNeutral // says nothing about whether the endpoint works: a timeout, a caller gone
)

// done records the result of a call acquire let through, and reports whether it opened
// the circuit (from closed) or closed it.
func (b *breaker) done(now time.Time, p permit, result int) (opened, closed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if p.trial {
		b.trial = false
	}
	switch {
	case result == callNeutral:
	case result == callOK:
		closed = !b.openedAt.IsZero()
		b.failures, b.openedAt = 0, time.Time{}
	case p.trial:
		b.openedAt = now // the trial failed: another cooldown
	default:
		b.failures++
		if b.failures >= b.threshold && b.openedAt.IsZero() {
			b.openedAt, opened = now, true
		}
	}
	return opened, closed
}
