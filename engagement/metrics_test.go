package engagement_test

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/engagement"
	"github.com/salience-ai/salience/models"
)

// minute returns the scenario's time of minute n.
func minute(n float64) time.Time { return t0.Add(time.Duration(n * float64(time.Minute))) }

// seedScenario records two conversations and reports on them through the service:
//
//	c1 (debugging)  turn 1 ambient  A 0.9 used, B 0.4 dismissed   latency 10 ms
//	                turn 2 ambient  C 0.7 ignored (implicit)      latency 20 ms
//	                turn 3 search   B 0.4 used, D 0.6 helpful     latency 30 ms
//	                turn 4          E 0.5 resurfaced, helpful;
//	                      ambient   C 0.7 used                    latency 40 ms
//	c2 (casual)     turn 1 ambient  F 0.8 (no outcome)            latency 50 ms
//	                turn 2 search   F 0.8 used                    latency 60 ms
//	                turn 3 resurface G 0.3 dismissed              latency 70 ms
//
// (letters are memories, numbers their confidence at surfacing). Turn k of c1 is at minute
// k, of c2 at minute 4+k; each report half a minute after its surfacing; the implicit ignore
// is the job's (ApplyImplicit), dated at its surfacing.
func seedScenario(t *testing.T) (models.Store, *engagement.Service) {
	t.Helper()
	st := openStore(t)
	var ws []*models.MemoryWrite
	for _, id := range []string{"A", "B", "C", "D", "E", "F", "G"} {
		ws = append(ws, &models.MemoryWrite{Memory: memory("ns", id)})
	}
	must(t, st.CreateMemories(ctx, ws))
	type row struct {
		id, conv, convType, turn, mem string
		mode                          models.Mode
		at                            float64
		conf, latency                 float64
		outcome                       models.EventType
		implicit                      bool
	}
	rows := []row{
		{"sA", "c1", "debugging", "c1t1", "A", models.ModeAmbient, 1, 0.9, 10, models.EventUsed, false},
		{"sB1", "c1", "debugging", "c1t1", "B", models.ModeAmbient, 1, 0.4, 10, models.EventDismissed, false},
		{"sC2", "c1", "debugging", "c1t2", "C", models.ModeAmbient, 2, 0.7, 20, models.EventIgnored, true},
		{"sB3", "c1", "debugging", "c1t3", "B", models.ModeSearch, 3, 0.4, 30, models.EventUsed, false},
		{"sD", "c1", "debugging", "c1t3", "D", models.ModeSearch, 3, 0.6, 30, models.EventHelpful, false},
		{"sE", "c1", "debugging", "c1t4", "E", models.ModeResurface, 4, 0.5, 40, models.EventHelpful, false},
		{"sC4", "c1", "debugging", "c1t4", "C", models.ModeAmbient, 4, 0.7, 40, models.EventUsed, false},
		{"sF1", "c2", "casual", "c2t1", "F", models.ModeAmbient, 5, 0.8, 50, "", false},
		{"sF2", "c2", "casual", "c2t2", "F", models.ModeSearch, 6, 0.8, 60, models.EventUsed, false},
		{"sG", "c2", "casual", "c2t3", "G", models.ModeResurface, 7, 0.3, 70, models.EventDismissed, false},
	}
	var evs []*models.Event
	var ignored []*models.Surfacing
	for i := len(rows) - 1; i >= 0; i-- { // out of order on purpose
		r := rows[i]
		sf := surfacing("ns", r.id, r.conv, r.turn, r.mem, r.mode, minute(r.at))
		sf.ConvType, sf.LatencyMS, sf.Components.Confidence = r.convType, r.latency, r.conf
		must(t, st.RecordSurfacings(ctx, []*models.Surfacing{sf}, nil))
		switch {
		case r.implicit:
			ignored = append(ignored, sf)
		case r.outcome != "":
			evs = append(evs, &models.Event{ID: "e" + r.id, SurfacingID: r.id, Type: r.outcome, At: minute(r.at + 0.5)})
		}
	}
	svc := engagement.NewService(st, engagement.ServiceOptions{Now: func() time.Time { return minute(60) }})
	res, err := svc.Apply(ctx, "ns", evs)
	must(t, err)
	if res.Applied != len(evs) {
		t.Fatalf("seeding: %+v", res.Results)
	}
	res, err = svc.ApplyImplicit(ctx, "ns", ignored)
	must(t, err)
	if res.Applied != len(ignored) {
		t.Fatalf("seeding the implicit ignores: %+v", res.Results)
	}
	return st, svc
}

func TestMetricsOnASeededScenario(t *testing.T) {
	st, svc := seedScenario(t)
	got, err := svc.Metrics(ctx, "ns", time.Time{}, time.Time{})
	must(t, err)
	// Rates hand-computed from the counts: precision (used + helpful) / surfaced, then
	// dismissed / surfaced and ignored / surfaced.
	want := &api.MetricsResponse{
		Namespace: "ns", Conversations: 2, Turns: 7,
		Overall: api.OutcomeCounts{Surfaced: 10, Used: 4, Helpful: 2, Ignored: 1, Dismissed: 2, Pending: 1,
			Precision: 0.6, DismissalRate: 0.2, IgnoreRate: 0.1},
		ByConversationType: map[string]api.OutcomeCounts{
			"debugging": {Surfaced: 7, Used: 3, Helpful: 2, Ignored: 1, Dismissed: 1, Precision: 5.0 / 7, DismissalRate: 1.0 / 7, IgnoreRate: 1.0 / 7},
			"casual":    {Surfaced: 3, Used: 1, Dismissed: 1, Pending: 1, Precision: 1.0 / 3, DismissalRate: 1.0 / 3},
		},
		ByMode: map[string]api.OutcomeCounts{
			"ambient":   {Surfaced: 5, Used: 2, Ignored: 1, Dismissed: 1, Pending: 1, Precision: 0.4, DismissalRate: 0.2, IgnoreRate: 0.2},
			"search":    {Surfaced: 3, Used: 2, Helpful: 1, Precision: 1},
			"resurface": {Surfaced: 2, Helpful: 1, Dismissed: 1, Precision: 0.5, DismissalRate: 0.5},
		},
		Events: api.EventCounts{Total: 9, Used: 4, Helpful: 2, Ignored: 1, Dismissed: 2, Implicit: 1},
		// Searches that found a used memory: sB3, sD, sF2; B and F had been volunteered before.
		ProactiveRecall: api.ProactiveRecall{Searches: 3, Anticipated: 2, Recall: 2.0 / 3},
		// Uses after a volunteered showing: B (turn 1 → 3), C (2 → 4), F (1 → 2).
		LeadTime: api.LeadTime{Uses: 3, AvgTurns: 5.0 / 3},
		// Seven turns at 10…70 ms: nearest rank ⌈0.5·7⌉ = 4th, ⌈0.95·7⌉ = 7th.
		Latency: api.LatencyPercentiles{Calls: 7, P50MS: 40, P95MS: 70},
		// Two co_retrieved edges (B–D in turn 3, C–E in turn 4); no concepts in this scenario.
		Graph: api.GraphHealth{Nodes: 4, Edges: 2, AvgDegree: 1, Communities: 2, Modularity: 0.5},
		// Pearson r of confidence (0.9 0.4 0.7 0.4 0.6 0.5 0.7 0.8 0.3) with usefulness
		// (1 0 0 1 1 1 1 1 0), computed independently (Python's statistics.correlation).
		Calibration:        api.Calibration{N: 9, Correlation: 0.4520972150897326},
		DecayEffectiveness: api.DecayEffectiveness{Resurfaced: 2, Useful: 1, Rate: 0.5},
	}
	// p_use was 0 on every surfacing of the scenario (recorded without a model): six of nine
	// outcomes positive, so Brier = ECE = 6/9 and the constant predictor's Brier 2/3·1/3.
	pu := got.Calibration.PUse
	if pu.N != 9 || math.Abs(pu.Brier-6.0/9) > 1e-12 || math.Abs(pu.ECE-6.0/9) > 1e-12 ||
		math.Abs(pu.ConstantBrier-2.0/9) > 1e-12 || len(pu.Curve) != 1 || pu.Curve[0].Count != 9 {
		t.Errorf("p_use calibration %+v", pu)
	}
	if len(got.Calibration.ByConvType) != 2 || got.Calibration.ByConvType["debugging"].N+got.Calibration.ByConvType["casual"].N != 9 {
		t.Errorf("p_use calibration by conversation type %+v", got.Calibration.ByConvType)
	}
	got.Calibration.PUse, got.Calibration.ByConvType = api.PUseCalibration{}, nil
	if math.Abs(got.Calibration.Correlation-want.Calibration.Correlation) < 1e-12 {
		got.Calibration.Correlation = want.Calibration.Correlation
	}
	if math.Abs(got.Graph.Modularity-want.Graph.Modularity) < 1e-12 {
		got.Graph.Modularity = want.Graph.Modularity
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("report:\n%s\nwant\n%s", show(got), show(want))
	}

	// A window: until minute 5 keeps conversation c1 and its events only.
	got, err = engagement.Metrics(ctx, st, "ns", time.Time{}, minute(5))
	must(t, err)
	if got.Overall != want.ByConversationType["debugging"] || got.Events.Total != 7 || got.Conversations != 1 || got.Latency.P95MS != 40 || !got.Until.Equal(minute(5)) {
		t.Errorf("windowed report:\n%s", show(got))
	}
	// Since minute 3.5 drops turns 1–3 of c1: C's use in turn 4 has no earlier showing left.
	got, err = engagement.Metrics(ctx, st, "ns", minute(3.5), time.Time{})
	must(t, err)
	if got.Overall.Surfaced != 5 || got.LeadTime != (api.LeadTime{Uses: 1, AvgTurns: 1}) || got.ProactiveRecall.Searches != 1 {
		t.Errorf("report since 3.5:\n%s", show(got))
	}
}

func show(r *api.MetricsResponse) string {
	s := fmt.Sprintf("%+v\n", *r)
	for k, c := range r.ByConversationType {
		s += fmt.Sprintf("  type %s: %+v\n", k, c)
	}
	for k, c := range r.ByMode {
		s += fmt.Sprintf("  mode %s: %+v\n", k, c)
	}
	return s
}

func TestMetricsOfAnEmptyNamespace(t *testing.T) {
	st := openStore(t)
	got, err := engagement.Metrics(ctx, st, "empty", time.Time{}, time.Time{})
	must(t, err)
	want := &api.MetricsResponse{Namespace: "empty", ByConversationType: map[string]api.OutcomeCounts{}, ByMode: map[string]api.OutcomeCounts{}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %s, want zeros", show(got))
	}
}

func TestMetricsRejectsBadInput(t *testing.T) {
	st := openStore(t)
	for _, c := range []struct {
		name         string
		ns           string
		since, until time.Time
		field        string
	}{
		{"namespace", "a b", time.Time{}, time.Time{}, "namespace"},
		{"until before since", "a", minute(2), minute(1), "until"},
		{"empty window", "a", minute(1), minute(1), "until"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := engagement.Metrics(ctx, st, c.ns, c.since, c.until)
			if models.ErrorCode(err) != models.EINVALID || models.ErrorField(err) != c.field {
				t.Errorf("err = %v, want EINVALID naming %s", err, c.field)
			}
		})
	}
}

// TestMetricsReadsEverySurfacing pages through more surfacings than one page holds, most of
// them sharing one time (as the surfacings of a turn do), and counts each exactly once.
func TestMetricsReadsEverySurfacing(t *testing.T) {
	st := openStore(t)
	must(t, st.CreateMemories(ctx, []*models.MemoryWrite{{Memory: memory("ns", "m")}}))
	n := 0
	for _, g := range []struct {
		at    time.Time
		count int
	}{{minute(1), 3}, {minute(2), 7000}, {minute(3), 4999}, {minute(4), 2}} {
		var ss []*models.Surfacing
		for range g.count {
			ss = append(ss, surfacing("ns", fmt.Sprintf("s%05d", n), "c", fmt.Sprintf("t%d", n), "m", models.ModeAmbient, g.at))
			n++
		}
		must(t, st.RecordSurfacings(ctx, ss, nil))
	}
	got, err := engagement.Metrics(ctx, st, "ns", time.Time{}, time.Time{})
	must(t, err)
	if got.Overall.Surfaced != n || got.Turns != n || got.Overall.Pending != n {
		t.Errorf("surfaced %d, turns %d, pending %d; want %d each", got.Overall.Surfaced, got.Turns, got.Overall.Pending, n)
	}
}

// scanCounter counts the ScanEdges calls the metrics make.
type scanCounter struct {
	engagement.Store
	scans int
}

func (c *scanCounter) ScanEdges(ctx context.Context, ns string, after models.EdgeKey, limit int) ([]*models.Edge, error) {
	c.scans++
	return c.Store.ScanEdges(ctx, ns, after, limit)
}

// TestMetricsCacheGraphHealthByVersion: a second read of an unchanged graph reads no edge;
// a new edge moves the store's graph version and is counted.
func TestMetricsCacheGraphHealthByVersion(t *testing.T) {
	st, _ := seedScenario(t)
	cs := &scanCounter{Store: st}
	svc := engagement.NewService(cs, engagement.ServiceOptions{Now: func() time.Time { return t0 }})
	first, err := svc.Metrics(ctx, "ns", time.Time{}, time.Time{})
	must(t, err)
	second, err := svc.Metrics(ctx, "ns", time.Time{}, time.Time{})
	must(t, err)
	if cs.scans != 1 || second.Graph != first.Graph || first.Graph.Edges != 2 {
		t.Fatalf("two reads: %d edge scans, graphs %+v then %+v; want 1 scan, the same graph of 2 edges", cs.scans, first.Graph, second.Graph)
	}
	must(t, st.Update(ctx, func(tx models.Tx) error {
		return tx.PutEdge(&models.Edge{Namespace: "ns", From: "x1", To: "x2", Type: models.EdgeMentions, Weight: 0.5})
	}))
	third, err := svc.Metrics(ctx, "ns", time.Time{}, time.Time{})
	must(t, err)
	if cs.scans != 2 || third.Graph.Edges != 3 || third.Graph.Nodes != first.Graph.Nodes+2 {
		t.Fatalf("after a new edge: %d scans, graph %+v; want 2 scans and 3 edges over 2 more nodes", cs.scans, third.Graph)
	}
	// The free function never caches.
	_, err = engagement.Metrics(ctx, cs, "ns", time.Time{}, time.Time{})
	must(t, err)
	if cs.scans != 3 {
		t.Fatalf("engagement.Metrics: %d scans, want 3", cs.scans)
	}
}
