package rerank

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"gonum.org/v1/gonum/stat"
)

// latencies keeps the durations of the most recent calls to the endpoint, so the gate can
// ask what a call is likely to cost now. Samples older than ttl are forgotten: a slow spell
// that made the gate skip every request must not keep it skipping once it is over, and
// skipped requests make no new samples.
type latencies struct {
	mu      sync.Mutex
	size    int
	ttl     time.Duration
	samples []sample // ring of at most size, oldest overwritten first
	next    int
}

type sample struct {
	at time.Time
	d  time.Duration
}

func newLatencies(size int, ttl time.Duration) *latencies {
	return &latencies{size: size, ttl: ttl}
}

// add records one call's duration, observed at now. A call cut off by its deadline is
// recorded with the time it was allowed: a lower bound of what it would have cost.
func (l *latencies) add(now time.Time, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := sample{at: now, d: d}
	if len(l.samples) < l.size {
		l.samples = append(l.samples, s)
		return
	}
	l.samples[l.next] = s
	l.next = (l.next + 1) % l.size
}

// p95 returns the 95th percentile of the samples younger than ttl at now (gonum's
// empirical quantile: the smallest sample with at least 95 % of the samples at or below
// it), and how many samples it saw; 0 and 0 when there are none.
func (l *latencies) p95(now time.Time) (time.Duration, int) {
	l.mu.Lock()
	xs := make([]float64, 0, len(l.samples))
	for _, s := range l.samples {
		if now.Sub(s.at) < l.ttl {
			xs = append(xs, float64(s.d))
		}
	}
	l.mu.Unlock()
	if len(xs) == 0 {
		return 0, 0
	}
	slices.Sort(xs)
	return time.Duration(stat.Quantile(0.95, stat.Empirical, xs, nil)), len(xs)
}

// gate is the budget rule of docs/design.md#threshold-and-rerank: a call may start only when
// elapsed + p95 + margin ≤ budget. It returns how long the call may take — what is left of
// the budget once the margin for the rest of the pipeline (budget cut, record, format) is
// set aside — and, when the call may not start, why. With no recent samples p95 is 0: the
// first calls go out, and the deadline keeps them inside the budget whatever they cost.
// force (a request's rerank "on") skips the p95 test but never the deadline.
func gate(elapsed, p95, margin, budget time.Duration, force bool) (left time.Duration, reason string) {
	left = budget - elapsed - margin
	switch {
	case left <= 0:
		return 0, fmt.Sprintf("no time left: elapsed %s + margin %s ≥ budget %s", ms(elapsed), ms(margin), ms(budget))
	case !force && p95 > left:
		return 0, fmt.Sprintf("elapsed %s + p95 %s + margin %s > budget %s", ms(elapsed), ms(p95), ms(margin), ms(budget))
	}
	return left, ""
}

// ms formats a duration in milliseconds with one decimal, as the API reports latencies.
func ms(d time.Duration) string {
	return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000)
}

// prober lets one call through now and then when the p95 says no, so the gate keeps
// measuring: without it a few slow calls would stop all calls, and so all new samples,
// until they age out. A probe runs under the same deadline as any call, so it never
// breaks a budget; it costs a call that may be cut off. The interval starts at min,
// doubles after every probe that did not answer in time (up to max, so an endpoint that
// stays slow costs one call per max) and is back to min after one that did.
type prober struct {
	min, max time.Duration

	mu       sync.Mutex
	interval time.Duration
	last     time.Time // when the last call of any kind went out
}

func newProber(min, max time.Duration) *prober {
	return &prober{min: min, max: max, interval: min}
}

// sent notes a call going out at now.
func (p *prober) sent(now time.Time) {
	p.mu.Lock()
	p.last = now
	p.mu.Unlock()
}

// due reports whether a probe may go at now (no call for an interval), and claims it.
func (p *prober) due(now time.Time) (bool, time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if now.Sub(p.last) < p.interval {
		return false, 0
	}
	p.last = now
	return true, p.interval
}

// result adapts the interval to whether a probe answered in time.
func (p *prober) result(inTime bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if inTime {
		p.interval = p.min
		return
	}
	p.interval = min(2*p.interval, p.max)
}
