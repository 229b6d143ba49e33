package app

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/client"
	"github.com/salience-ai/salience/internal/testserver"
)

func TestReportExperimentCommand(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	c, err := client.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := c.Namespace("a")
	e, err := ns.CreateExperiment(ctx, api.ExperimentCreate{Name: "half-life", Variants: []api.Variant{
		{Name: "control", Share: 0.5}, {Name: "short-half-life", Share: 0.5, Overrides: api.VariantOverrides{FreshnessHalfLifeHours: 24}}}})
	if err != nil {
		t.Fatal(err)
	}
	env := func(string) string { return "" }
	var out, errs bytes.Buffer
	// Flags after the id, as people type them.
	if err := runReport(ctx, []string{"experiment", e.ID, "--ns", "a", "--server", srv.URL}, &out, &errs, env); err != nil {
		t.Fatalf("report: %v\n%s", err, errs.String())
	}
	// Every metric, and the default ranking by what bots gain per turn.
	for _, want := range []string{"half-life", "control", "short-half-life", "Ranked by reward per turn", "reward/turn", "used/turn",
		"surfaced/turn", "precision", "dismissal"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := runReport(ctx, []string{"experiment", "--ns", "a", "--json", e.ID}, &out, &errs, func(k string) string {
		if k == "SALIENCE_URL" {
			return srv.URL
		}
		return ""
	}); err != nil || !strings.Contains(out.String(), `"experiment_id": "`+e.ID) {
		t.Errorf("--json: %v\n%s", err, out.String())
	}
	if err := runReport(ctx, []string{"experiment", "nope", "--ns", "a", "--server", srv.URL}, &out, &errs, env); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("unknown experiment: %v, want not found", err)
	}
	if err := runReport(ctx, []string{"experiment", e.ID}, &out, &errs, env); err == nil {
		t.Error("no --ns: no error")
	}
	if err := runReport(ctx, []string{"experiments"}, &out, &errs, env); err == nil {
		t.Error("report experiments: no error")
	}
}
