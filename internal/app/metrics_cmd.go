package app

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/engagement"
)

// runMetrics runs `salience metrics`: the engagement metrics of one namespace (what GET
// /v1/namespaces/{ns}/metrics returns), read straight from the database of a data
// directory, as a table or (--json) as the API's JSON.
func runMetrics(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("salience metrics", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := declareDataFlags(fs)
	ns := fs.String("ns", "", "namespace (required)")
	since := fs.String("since", "", "only surfacings and events at or after this RFC 3339 time")
	until := fs.String("until", "", "only surfacings and events before this RFC 3339 time")
	asJSON := fs.Bool("json", false, "print the API's JSON instead of a table")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: salience metrics --ns NS [--data DIR | --store neo4j --neo4j-uri URI] [--since T] [--until T] [--json]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("metrics: unexpected arguments %q", fs.Args())
	}
	if *ns == "" {
		fs.Usage()
		return errors.New("metrics: --ns is required")
	}
	var from, to time.Time
	for _, p := range []struct {
		name string
		val  string
		dst  *time.Time
	}{{"since", *since, &from}, {"until", *until, &to}} {
		if p.val == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, p.val)
		if err != nil {
			return fmt.Errorf("metrics: --%s must be an RFC 3339 time such as 2026-05-01T00:00:00Z, not %q", p.name, p.val)
		}
		*p.dst = t
	}
	st, err := data.open(ctx, fs, getenv)
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	defer st.Close()
	r, err := engagement.Metrics(ctx, st, *ns, from, to)
	if err != nil {
		return err
	}
	ids, err := st.Embedders(ctx) // as the metrics route shows it
	if err != nil {
		return err
	}
	if id, ok := ids[*ns]; ok {
		r.Embedder = &api.Embedder{Name: id.Name, Dims: id.Dims}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	return printMetrics(stdout, r)
}

// printMetrics renders a report as a small table for people.
func printMetrics(w io.Writer, r *api.MetricsResponse) error {
	window := "all time"
	switch {
	case !r.Since.IsZero() && !r.Until.IsZero():
		window = r.Since.Format(time.RFC3339) + " to " + r.Until.Format(time.RFC3339)
	case !r.Since.IsZero():
		window = "since " + r.Since.Format(time.RFC3339)
	case !r.Until.IsZero():
		window = "until " + r.Until.Format(time.RFC3339)
	}
	fmt.Fprintf(w, "namespace %s, %s: %d conversations, %d turns\n", r.Namespace, window, r.Conversations, r.Turns)
	if r.Embedder != nil {
		fmt.Fprintf(w, "embedder: %s (%d dimensions)\n", r.Embedder.Name, r.Embedder.Dims)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tsurfaced\tused\thelpful\tignored\tdismissed\tpending\tprecision\tdismissal\tignore\t")
	row := func(name string, c api.OutcomeCounts) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%.3f\t%.3f\t%.3f\t\n", name, c.Surfaced, c.Used, c.Helpful,
			c.Ignored, c.Dismissed, c.Pending, c.Precision, c.DismissalRate, c.IgnoreRate)
	}
	row("overall", r.Overall)
	for _, k := range sortedKeys(r.ByConversationType) {
		row("type "+k, r.ByConversationType[k])
	}
	for _, k := range sortedKeys(r.ByMode) {
		row("mode "+k, r.ByMode[k])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	e := r.Events
	fmt.Fprintf(w, "\nevents: %d (used %d, helpful %d, ignored %d, dismissed %d; %d implicit)\n", e.Total, e.Used, e.Helpful, e.Ignored, e.Dismissed, e.Implicit)
	fmt.Fprintf(w, "proactive recall: %.3f (%d of %d used search results had been volunteered earlier)\n",
		r.ProactiveRecall.Recall, r.ProactiveRecall.Anticipated, r.ProactiveRecall.Searches)
	fmt.Fprintf(w, "lead time: %.2f turns on average (%d uses after a volunteered showing)\n", r.LeadTime.AvgTurns, r.LeadTime.Uses)
	fmt.Fprintf(w, "retrieval latency: p50 %.2f ms, p95 %.2f ms (%d recall calls)\n", r.Latency.P50MS, r.Latency.P95MS, r.Latency.Calls)
	g := r.Graph
	fmt.Fprintf(w, "graph: %d nodes, %d edges, average degree %.2f, clustering %.3f, %d communities (modularity %.3f)\n",
		g.Nodes, g.Edges, g.AvgDegree, g.Clustering, g.Communities, g.Modularity)
	fmt.Fprintf(w, "confidence calibration: r = %.3f over %d surfacings with an outcome\n", r.Calibration.Correlation, r.Calibration.N)
	pu := r.Calibration.PUse
	fmt.Fprintf(w, "p_use calibration: Brier %.4f (best constant %.4f at rate %.3f), ECE %.4f over %d surfacings\n", pu.Brier, pu.ConstantBrier, pu.Rate, pu.ECE, pu.N)
	for _, ct := range slices.Sorted(maps.Keys(r.Calibration.ByConvType)) {
		c := r.Calibration.ByConvType[ct]
		fmt.Fprintf(w, "  %s: Brier %.4f (constant %.4f), ECE %.4f over %d\n", ct, c.Brier, c.ConstantBrier, c.ECE, c.N)
	}
	for _, p := range pu.Curve {
		fmt.Fprintf(w, "  reliability: predicted %.3f, observed %.3f (%d)\n", p.Predicted, p.Observed, p.Count)
	}
	d := r.DecayEffectiveness
	_, err := fmt.Fprintf(w, "decay effectiveness: %.3f (%d of %d resurfaced memories used or helpful)\n", d.Rate, d.Useful, d.Resurfaced)
	return err
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
