package engagement

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/graph"
	"github.com/salience-ai/salience/learn"
	"github.com/salience-ai/salience/models"
)

// MetricsStore is the part of models.Store the metrics read.
type MetricsStore interface {
	FindSurfacings(ctx context.Context, f models.SurfacingFilter) ([]*models.Surfacing, error)
	CountEvents(ctx context.Context, f models.EventFilter) ([]models.EventTally, error)
	ScanEdges(ctx context.Context, ns string, after models.EdgeKey, limit int) ([]*models.Edge, error)
	GraphVersion(ctx context.Context, ns string) (uint64, bool, error)
}

// The report is the API's type, api.MetricsResponse, defined once there (the wire types
// package, which imports nothing); the definitions of its parts are here, next to the code
// that computes them:
//
//   - Overall, ByConversationType, ByMode (api.OutcomeCounts): the outcomes of a set of
//     surfacings. Each surfacing counts once, by its outcome (its first report, or the
//     implicit-ignore job's ignored); Pending ones have none yet (the job will record them
//     as ignored). Precision is (Used + Helpful) / Surfaced; the rates are Dismissed /
//     Surfaced and Ignored / Surfaced; all are 0 when nothing was surfaced. The maps split
//     Overall by the surfacing's conversation type ("unknown" when none was recorded) and
//     mode.
//   - Events (api.EventCounts): the engagement log's events in the window, by type;
//     Implicit counts those the implicit-ignore job wrote.
//   - ProactiveRecall: how often the memory an explicit search was for had already been
//     volunteered. An explicit search for a memory is a search-mode surfacing whose outcome
//     is used or helpful (the result the caller took); it was Anticipated when the same
//     memory had been volunteered (ambient, predict or resurface mode) in an earlier turn of
//     the same conversation. Recall = Anticipated / Searches, 0 when there are none.
//   - LeadTime: how far ahead volunteered memories were shown. A use is a surfacing with
//     outcome used or helpful, in turn u of its conversation; it counts when the same memory
//     was volunteered in an earlier turn of that conversation, and its lead is u − v for the
//     latest such turn v. Uses counts the distinct (conversation, memory, turn) uses that
//     qualify; AvgTurns is their mean lead, 0 when there are none. Turns are numbered per
//     conversation from the surfacing log: the distinct turn ids of the window's
//     surfacings, ordered by their first surfacing's time (then id). A recall call that
//     surfaced nothing leaves no trace there and is not counted.
//   - Latency (api.LatencyPercentiles): the server-side retrieval latency of the recall
//     calls (turns) that surfaced something in the window, from the latency each surfacing
//     records; turns recorded without a latency are skipped. Percentiles are nearest-rank.
//   - Graph (api.GraphHealth): graph.Health over all of the namespace's edges.
//   - Calibration: the Pearson correlation between a memory's confidence when it was
//     surfaced (the score's confidence component) and whether it proved useful (1 for used
//     or helpful, 0 for ignored or dismissed), over the surfacings with an outcome. N is
//     how many; the correlation is 0 when N < 2 or either side does not vary. A calibrated
//     confidence correlates positively.
//   - DecayEffectiveness: the share of resurfaced memories (mode resurface) that were used
//     or helpful: whether spaced repetition brings back memories worth bringing back.

// addOutcome counts sf in c.
func addOutcome(c *api.OutcomeCounts, sf *models.Surfacing) {
	c.Surfaced++
	switch sf.Outcome {
	case models.EventUsed:
		c.Used++
	case models.EventHelpful:
		c.Helpful++
	case models.EventIgnored:
		c.Ignored++
	case models.EventDismissed:
		c.Dismissed++
	default:
		c.Pending++
	}
}

// withRates returns c with its precision and rates computed from its counts.
func withRates(c api.OutcomeCounts) api.OutcomeCounts {
	c.Precision = ratio(c.Used+c.Helpful, c.Surfaced)
	c.DismissalRate = ratio(c.Dismissed, c.Surfaced)
	c.IgnoreRate = ratio(c.Ignored, c.Surfaced)
	return c
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Metrics computes the engagement metrics of namespace ns (defined above) from the
// surfacing log, the event log and the graph (all of the namespace's edges, whatever the
// window). since and until bound the times of surfacings and events; zero means open.
// EINVALID when until is not after since.
func Metrics(ctx context.Context, st MetricsStore, ns string, since, until time.Time) (*api.MetricsResponse, error) {
	return metrics(ctx, st, ns, since, until, nil)
}

func metrics(ctx context.Context, st MetricsStore, ns string, since, until time.Time, hc *healthCache) (*api.MetricsResponse, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	if !since.IsZero() && !until.IsZero() && !until.After(since) {
		return nil, models.Invalid("until", "until must be after since")
	}
	ss, err := allSurfacings(ctx, st, ns, since, until)
	if err != nil {
		return nil, err
	}
	// The events are only counted: the store tallies them rather than returning each one.
	tallies, err := st.CountEvents(ctx, models.EventFilter{Namespace: ns, Since: since, Until: until})
	if err != nil {
		return nil, err
	}
	h, err := graphHealth(ctx, st, ns, hc)
	if err != nil {
		return nil, err
	}
	r := report(ss, tallies)
	r.Namespace, r.Since, r.Until = ns, since, until
	r.Graph = api.GraphHealth(h)
	return r, nil
}

// Metrics computes the engagement metrics of namespace ns over the service's store (see
// Metrics). The graph's health is kept per namespace while the store's GraphVersion says
// the edges are unchanged: it is whole-graph work (every edge read, communities found) that
// a dashboard polling the metrics would otherwise redo on a graph that did not move.
func (s *Service) Metrics(ctx context.Context, ns string, since, until time.Time) (*api.MetricsResponse, error) {
	return metrics(ctx, s.store, ns, since, until, &s.health)
}

// healthCache holds graph.Health per namespace with the graph version it was computed at.
type healthCache struct {
	mu sync.Mutex
	m  map[string]cachedHealth
}

type cachedHealth struct {
	version uint64
	stats   graph.HealthStats
}

// graphHealth returns graph.Health over ns's edges, from the cache when the store's graph
// version is the one it was computed at (hc nil: never cached).
func graphHealth(ctx context.Context, st MetricsStore, ns string, hc *healthCache) (graph.HealthStats, error) {
	var v uint64
	ok := false
	if hc != nil {
		var err error
		if v, ok, err = st.GraphVersion(ctx, ns); err != nil {
			return graph.HealthStats{}, err
		}
		if ok {
			hc.mu.Lock()
			c, hit := hc.m[ns]
			hc.mu.Unlock()
			if hit && c.version == v {
				return c.stats, nil
			}
		}
	}
	edges, err := allEdges(ctx, st, ns)
	if err != nil {
		return graph.HealthStats{}, err
	}
	h := graph.Health(edges)
	if ok {
		hc.mu.Lock()
		if hc.m == nil {
			hc.m = map[string]cachedHealth{}
		}
		hc.m[ns] = cachedHealth{v, h}
		hc.mu.Unlock()
	}
	return h, nil
}

// metricsPage is how many surfacings and edges one store call reads.
const metricsPage = 5000

// allSurfacings reads every surfacing of the window, oldest first. FindSurfacings pages by
// time only, so each next page starts at the last time seen and skips what was read; when a
// whole page shares one time, the page grows until it gets past it.
func allSurfacings(ctx context.Context, st MetricsStore, ns string, since, until time.Time) ([]*models.Surfacing, error) {
	var out []*models.Surfacing
	seen := map[string]bool{} // ids read at the current boundary time
	from, limit := since, metricsPage
	for {
		page, err := st.FindSurfacings(ctx, models.SurfacingFilter{Namespace: ns, Since: from, Until: until, Limit: limit, Brief: true})
		if err != nil {
			return nil, err
		}
		fresh := 0
		for _, sf := range page {
			if !sf.At.Equal(from) || !seen[sf.ID] {
				out = append(out, sf)
				fresh++
			}
		}
		if len(page) < limit {
			return out, nil
		}
		last := page[len(page)-1].At
		if fresh == 0 {
			limit *= 2
			continue
		}
		if !last.Equal(from) {
			clear(seen)
		}
		for _, sf := range page {
			if sf.At.Equal(last) {
				seen[sf.ID] = true
			}
		}
		from = last
	}
}

// allEdges reads every edge of the namespace.
func allEdges(ctx context.Context, st MetricsStore, ns string) ([]*models.Edge, error) {
	var out []*models.Edge
	var after models.EdgeKey
	for {
		page, err := st.ScanEdges(ctx, ns, after, metricsPage)
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if len(page) < metricsPage {
			return out, nil
		}
		after = page[len(page)-1].Key()
	}
}

// volunteered reports whether a mode shows memories nobody asked for.
func volunteered(m models.Mode) bool {
	return m == models.ModeAmbient || m == models.ModePredict || m == models.ModeResurface
}

// report computes everything but the graph from the window's surfacings and events.
func report(ss []*models.Surfacing, evs []models.EventTally) *api.MetricsResponse {
	r := &api.MetricsResponse{}
	byType, byMode := map[string]*api.OutcomeCounts{}, map[string]*api.OutcomeCounts{}
	for _, sf := range ss {
		addOutcome(&r.Overall, sf)
		ct := sf.ConvType
		if ct == "" {
			ct = "unknown"
		}
		addOutcome(counts(byType, ct), sf)
		addOutcome(counts(byMode, string(sf.Mode)), sf)
		if sf.Mode == models.ModeResurface {
			r.DecayEffectiveness.Resurfaced++
			if sf.Outcome.Positive() {
				r.DecayEffectiveness.Useful++
			}
		}
	}
	r.Overall = withRates(r.Overall)
	r.ByConversationType, r.ByMode = withRatesAll(byType), withRatesAll(byMode)
	r.DecayEffectiveness.Rate = ratio(r.DecayEffectiveness.Useful, r.DecayEffectiveness.Resurfaced)

	for _, e := range evs {
		r.Events.Total += e.Count
		switch e.Type {
		case models.EventUsed:
			r.Events.Used += e.Count
		case models.EventHelpful:
			r.Events.Helpful += e.Count
		case models.EventIgnored:
			r.Events.Ignored += e.Count
		case models.EventDismissed:
			r.Events.Dismissed += e.Count
		}
		if e.Implicit {
			r.Events.Implicit += e.Count
		}
	}

	r.Turns, r.Latency = turnLatency(ss)
	r.Conversations, r.ProactiveRecall, r.LeadTime = anticipation(ss)
	r.Calibration = calibration(ss)
	return r
}

func counts(m map[string]*api.OutcomeCounts, k string) *api.OutcomeCounts {
	c := m[k]
	if c == nil {
		c = &api.OutcomeCounts{}
		m[k] = c
	}
	return c
}

func withRatesAll(m map[string]*api.OutcomeCounts) map[string]api.OutcomeCounts {
	out := make(map[string]api.OutcomeCounts, len(m))
	for k, c := range m {
		out[k] = withRates(*c)
	}
	return out
}

// turnKey identifies a turn; turn ids are only meaningful within a conversation.
type turnKey struct{ conv, turn string }

// turnLatency counts the turns and takes the latency percentiles over them.
func turnLatency(ss []*models.Surfacing) (int, api.LatencyPercentiles) {
	seen := map[turnKey]bool{}
	var lat []float64
	for _, sf := range ss {
		k := turnKey{sf.ConversationID, sf.TurnID}
		if seen[k] {
			continue
		}
		seen[k] = true
		if sf.LatencyMS > 0 {
			lat = append(lat, sf.LatencyMS)
		}
	}
	slices.Sort(lat)
	return len(seen), api.LatencyPercentiles{Calls: len(lat), P50MS: nearestRank(lat, 0.50), P95MS: nearestRank(lat, 0.95)}
}

// nearestRank is the p-quantile of sorted values by the nearest-rank method: the smallest
// value with at least p of the values at or below it (gonum's Empirical quantile: the first
// value whose cumulative count reaches p·n); 0 for none.
func nearestRank(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return stat.Quantile(p, stat.Empirical, sorted, nil)
}

// anticipation numbers each conversation's turns and computes proactive recall and lead time
// (see ProactiveRecall and LeadTime for the definitions).
func anticipation(ss []*models.Surfacing) (int, api.ProactiveRecall, api.LeadTime) {
	byConv := map[string][]*models.Surfacing{}
	for _, sf := range ss {
		if sf.ConversationID != "" {
			byConv[sf.ConversationID] = append(byConv[sf.ConversationID], sf)
		}
	}
	var pr api.ProactiveRecall
	var lt api.LeadTime
	leadSum := 0
	for _, conv := range byConv {
		// Number the turns by their first surfacing's time, then id.
		type first struct {
			at time.Time
			id string
		}
		firsts := map[string]first{}
		for _, sf := range conv {
			if f, ok := firsts[sf.TurnID]; !ok || sf.At.Before(f.at) {
				firsts[sf.TurnID] = first{sf.At, sf.TurnID}
			}
		}
		order := make([]first, 0, len(firsts))
		for _, f := range firsts {
			order = append(order, f)
		}
		slices.SortFunc(order, func(a, b first) int {
			if c := a.at.Compare(b.at); c != 0 {
				return c
			}
			return cmp.Compare(a.id, b.id)
		})
		turnNo := make(map[string]int, len(order))
		for i, f := range order {
			turnNo[f.id] = i + 1
		}
		// The turns in which each memory was volunteered.
		offered := map[string][]int{}
		for _, sf := range conv {
			if volunteered(sf.Mode) {
				offered[sf.MemoryID] = append(offered[sf.MemoryID], turnNo[sf.TurnID])
			}
		}
		// latestBefore returns the latest turn before u in which memory id was volunteered.
		latestBefore := func(id string, u int) (int, bool) {
			best, ok := 0, false
			for _, v := range offered[id] {
				if v < u && v > best {
					best, ok = v, true
				}
			}
			return best, ok
		}
		counted := map[[2]string]map[int]bool{}
		for _, sf := range conv {
			if !sf.Outcome.Positive() {
				continue
			}
			u := turnNo[sf.TurnID]
			v, ok := latestBefore(sf.MemoryID, u)
			if sf.Mode == models.ModeSearch {
				pr.Searches++
				if ok {
					pr.Anticipated++
				}
			}
			if !ok {
				continue
			}
			k := [2]string{sf.ConversationID, sf.MemoryID}
			if counted[k] == nil {
				counted[k] = map[int]bool{}
			}
			if counted[k][u] {
				continue
			}
			counted[k][u] = true
			lt.Uses++
			leadSum += u - v
		}
	}
	pr.Recall = ratio(pr.Anticipated, pr.Searches)
	lt.AvgTurns = ratio(leadSum, lt.Uses)
	return len(byConv), pr, lt
}

// calibration correlates confidence at surfacing with usefulness (Pearson's r) and scores
// p_use at surfacing against the outcomes, overall and by conversation type. Proactive
// predictions are left out: they were never ranked (no score components) and their p_use is
// the topic's predicted probability, not the relevance model's.
func calibration(ss []*models.Surfacing) api.Calibration {
	var xs, ys []float64
	var all learn.Calibration
	byType := map[string]*learn.Calibration{}
	for _, sf := range ss {
		if sf.Outcome == "" || sf.Mode == models.ModePredict {
			continue
		}
		y := 0.0
		if sf.Outcome.Positive() {
			y = 1
		}
		xs = append(xs, sf.Components.Confidence)
		ys = append(ys, y)
		all.Add(sf.PUse, y)
		ct := sf.ConvType
		if ct == "" {
			ct = "unknown"
		}
		if byType[ct] == nil {
			byType[ct] = &learn.Calibration{}
		}
		byType[ct].Add(sf.PUse, y)
	}
	out := api.Calibration{N: len(xs), Correlation: pearson(xs, ys), PUse: pUseCalibration(&all)}
	if len(byType) > 0 {
		out.ByConvType = map[string]api.PUseCalibration{}
		for ct, c := range byType {
			out.ByConvType[ct] = pUseCalibration(c)
		}
	}
	return out
}

func pUseCalibration(c *learn.Calibration) api.PUseCalibration {
	out := api.PUseCalibration{N: c.N, Brier: c.Brier(), ECE: c.ECE(), Rate: c.Rate(), ConstantBrier: c.ConstantBrier()}
	for _, p := range c.Curve() {
		out.Curve = append(out.Curve, api.ReliabilityPoint{Count: p.Count, Predicted: p.Predicted, Observed: p.Observed})
	}
	return out
}

// pearson returns the correlation of xs and ys, 0 when it is undefined: fewer than two
// pairs, or a side that does not vary (tested exactly: a mean computed in floating point
// could leave a constant side a tiny spread).
func pearson(xs, ys []float64) float64 {
	if len(xs) < 2 || slices.Min(xs) == slices.Max(xs) || slices.Min(ys) == slices.Max(ys) {
		return 0
	}
	return stat.Correlation(xs, ys, nil)
}
