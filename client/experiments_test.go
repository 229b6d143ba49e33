package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image/png"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/client"
	"github.com/salience-ai/salience/experiment"
	"github.com/salience-ai/salience/internal/testserver"
	"github.com/salience-ai/salience/models"
)

func twoVariants() api.ExperimentCreate {
	return api.ExperimentCreate{Name: "fixed threshold", Variants: []api.Variant{
		{Name: "control", Share: 0.5},
		{Name: "fixed", Share: 0.5, Overrides: api.VariantOverrides{ThresholdPolicy: "fixed:0.6", FreshnessHalfLifeHours: 48}},
	}}
}

// TestExperimentLifecycle: create (admin only under --settings-writers admin), one running
// at a time, list, get, recall assigns variants and records them, engagement counts in the
// report in every format, snapshots by date, stop; bad ids, formats and dates are 4xx
// naming the field. Every exchange is checked against openapi.yaml.
func TestExperimentLifecycle(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{WithKeys: true})
	v := testserver.NewValidator(t, nil)
	ctx := context.Background()
	admin := keyed(t, srv, v, testserver.KeyAdmin)
	ns := admin.Namespace("a")
	bot := keyed(t, srv, v, testserver.KeyA).Namespace("a")

	if _, err := bot.CreateExperiment(ctx, twoVariants()); client.ErrorCode(err) != client.CodeForbidden {
		t.Errorf("a namespace key creating: %v, want forbidden (settings writers: admin)", err)
	}
	bad := twoVariants()
	bad.Variants[1].Share = 0.4
	if _, err := ns.CreateExperiment(ctx, bad); client.ErrorCode(err) != client.CodeInvalid {
		t.Errorf("shares summing to 0.9: %v, want invalid", err)
	}
	e, err := ns.CreateExperiment(ctx, twoVariants())
	if err != nil {
		t.Fatal(err)
	}
	if e.Status != "running" || e.CreatedBy != "ops" || e.Namespace != "a" || len(e.Variants) != 2 || e.Variants[1].Overrides.ThresholdPolicy != "fixed:0.6" {
		t.Errorf("created %+v", e)
	}
	if _, err := ns.CreateExperiment(ctx, twoVariants()); client.ErrorCode(err) != client.CodeConflict {
		t.Errorf("a second running experiment: %v, want conflict", err)
	}
	if list, err := ns.Experiments(ctx); err != nil || len(list) != 1 || list[0].ID != e.ID {
		t.Errorf("list = %+v, %v", list, err)
	}
	if got, err := ns.Experiment(ctx, e.ID); err != nil || got.Name != "fixed threshold" {
		t.Errorf("get = %+v, %v", got, err)
	}
	if _, err := ns.Experiment(ctx, "nope"); client.ErrorCode(err) != client.CodeNotFound {
		t.Errorf("get unknown: %v, want not found", err)
	}

	// Traffic: every conversation gets its assigned variant; each memory shown is used.
	if _, err := bot.Store(ctx, api.MemoryInput{Kind: "fact", Content: "Nadia keeps her bees on the roof of the old cannery."}); err != nil {
		t.Fatal(err)
	}
	exp := &models.Experiment{ID: e.ID, Variants: []models.Variant{{Name: "control", Share: 0.5}, {Name: "fixed", Share: 0.5}}}
	surfaced := map[string]int{}
	for i := range 12 {
		conv := "conv-" + strconv.Itoa(i)
		r, err := bot.Recall(ctx, api.RecallRequest{ConversationID: conv, Query: "where are the bees?"})
		if err != nil {
			t.Fatal(err)
		}
		if want := experiment.Assign(exp, conv).Name; r.Variant != want || r.Experiment != e.ID {
			t.Errorf("%s: variant %q of %q, want %s", conv, r.Variant, r.Experiment, want)
		}
		for _, res := range r.Results {
			surfaced[r.Variant]++
			if _, err := bot.Report(ctx, api.EngagementEvent{ID: "ev-" + res.SurfacingID, SurfacingID: res.SurfacingID, Type: "used"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if surfaced["control"] == 0 || surfaced["fixed"] == 0 {
		t.Fatalf("surfaced per variant %v: want both variants to show something", surfaced)
	}
	if _, err := bot.Recall(ctx, api.RecallRequest{ConversationID: "conv-1", Query: "bees", ThresholdPolicy: "off"}); client.ErrorCode(err) != client.CodeInvalid {
		t.Errorf("a request setting its threshold policy in an experiment: %v, want invalid", err)
	}

	raw, err := ns.ExperimentReport(ctx, e.ID, client.ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var rep experiment.Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("report JSON: %v\n%s", err, raw)
	}
	if rep.ExperimentID != e.ID || len(rep.Variants) != 2 || rep.Variants[0].Variant != "control" {
		t.Fatalf("report = %s", raw)
	}
	for _, vr := range rep.Variants {
		if vr.Surfaced != surfaced[vr.Variant] || vr.Used != surfaced[vr.Variant] || vr.Turns == 0 {
			t.Errorf("variant %s: surfaced %d used %d turns %d, want %d surfaced and used", vr.Variant, vr.Surfaced, vr.Used, vr.Turns, surfaced[vr.Variant])
		}
	}
	for format, want := range map[string]string{"csv": "experiment_id,variant", "html": `id="comparison-table"`, "text": "control"} {
		b, err := ns.ExperimentReport(ctx, e.ID, client.ReportOptions{Format: format})
		if err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%s report: %v, want it to contain %q:\n%.300s", format, err, want, b)
		}
	}
	img, err := ns.ExperimentReport(ctx, e.ID, client.ReportOptions{Format: "png", Plot: "posterior"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(bytes.NewReader(img)); err != nil {
		t.Errorf("png report: %v", err)
	}

	// No snapshot yet: as_of is a 404 naming it; after the job, the day reads.
	today := time.Now().UTC()
	if _, err := ns.ExperimentReport(ctx, e.ID, client.ReportOptions{AsOf: today}); client.ErrorCode(err) != client.CodeNotFound {
		t.Errorf("as_of with no snapshot: %v, want not found", err)
	}
	// The job snapshots the last complete day; this experiment began today, so a snapshot
	// comes from a run tomorrow: run the service's job body with tomorrow's clock.
	if n, err := srv.Experiments.SnapshotAll(ctx, today.Add(24*time.Hour)); err != nil || n != 1 {
		t.Fatalf("snapshot: %d, %v; want 1", n, err)
	}
	raw, err = ns.ExperimentReport(ctx, e.ID, client.ReportOptions{AsOf: today.Add(72 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	var snap experiment.Report
	if err := json.Unmarshal(raw, &snap); err != nil || snap.Variants[0].Surfaced != rep.Variants[0].Surfaced {
		t.Errorf("snapshot report: %v, %.300s", err, raw)
	}

	stopped, err := ns.StopExperiment(ctx, e.ID)
	if err != nil || stopped.Status != "stopped" || stopped.StoppedAt.IsZero() {
		t.Errorf("stop = %+v, %v", stopped, err)
	}
	if again, err := ns.StopExperiment(ctx, e.ID); err != nil || !again.StoppedAt.Equal(stopped.StoppedAt) {
		t.Errorf("stop again = %+v, %v; want unchanged", again, err)
	}
	r, err := bot.Recall(ctx, api.RecallRequest{ConversationID: "conv-1", Query: "bees", ThresholdPolicy: "off"})
	if err != nil || r.Variant != "" {
		t.Errorf("after the stop: variant %q, %v; want none", r.Variant, err)
	}
}

// TestExperimentReportBadInput: a bad format, plot or date is a 400 naming it, an unknown
// experiment a 404.
func TestExperimentReportBadInput(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	v := testserver.NewValidator(t, nil)
	c := newClient(t, srv, v)
	ctx := context.Background()
	ns := c.Namespace("a")
	e, err := ns.CreateExperiment(ctx, twoVariants())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		query, field string
		status       int
	}{
		{"format=xml", "format", 400},
		{"plot=pie", "plot", 400},
		{"as_of=yesterday", "as_of", 400},
		{"as_of=2020-01-01", "as_of", 404},
		// Each parameter once: the handler would read the first and ignore the rest.
		{"plot=precision&plot=pie", "plot", 400},
		{"format=json&format=csv", "format", 400},
		{"colour=red", "colour", 400},
	} {
		res := getRaw(t, srv.URL+"/v1/namespaces/a/experiments/"+e.ID+"/report?"+tc.query, "")
		if res.status != tc.status || res.field != tc.field {
			t.Errorf("%s: %d naming %q, want %d naming %q", tc.query, res.status, res.field, tc.status, tc.field)
		}
	}
	if res := getRaw(t, srv.URL+"/v1/namespaces/a/experiments/nope/report", ""); res.status != 404 {
		t.Errorf("unknown experiment: %d, want 404", res.status)
	}
	// An experiment with no traffic yet renders in every format.
	for _, f := range []string{"json", "csv", "html", "text", "png"} {
		for _, plot := range []string{"precision", "posterior"} {
			if _, err := ns.ExperimentReport(ctx, e.ID, client.ReportOptions{Format: f, Plot: plot}); err != nil {
				t.Errorf("empty experiment, %s %s: %v", f, plot, err)
			}
		}
	}
	// The Accept header chooses the format when the parameter does not.
	if res := getRaw(t, srv.URL+"/v1/namespaces/a/experiments/"+e.ID+"/report", "text/csv"); res.status != 200 || !strings.HasPrefix(res.contentType, "text/csv") {
		t.Errorf("Accept text/csv: %d %s", res.status, res.contentType)
	}
}

type rawResult struct {
	status      int
	field       string
	contentType string
}

// getRaw GETs u with an Accept header (none when "") and reads the error's field.
func getRaw(t *testing.T, u, accept string) rawResult {
	t.Helper()
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		Error struct {
			Field string `json:"field"`
		} `json:"error"`
	}
	b, _ := io.ReadAll(res.Body)
	_ = json.Unmarshal(b, &body)
	return rawResult{status: res.StatusCode, field: body.Error.Field, contentType: res.Header.Get("Content-Type")}
}

// TestExperimentPrimaryMetric: an experiment ranks by reward per turn unless it declares
// another metric; the metric is stored, returned and used by the report; an unknown one is
// a 400 naming primary_metric that creates nothing. Checked against openapi.yaml.
func TestExperimentPrimaryMetric(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	v := testserver.NewValidator(t, nil)
	ctx := context.Background()
	ns := newClient(t, srv, v).Namespace("a")

	bad := twoVariants()
	bad.PrimaryMetric = "clicks"
	_, err := ns.CreateExperiment(ctx, bad)
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != http.StatusBadRequest || ce.Field != "primary_metric" {
		t.Fatalf("primary metric clicks: %v, want a 400 naming primary_metric", err)
	}
	if list, err := ns.Experiments(ctx); err != nil || len(list) != 0 {
		t.Fatalf("after the refused create: %+v, %v; want no experiment", list, err)
	}

	e, err := ns.CreateExperiment(ctx, twoVariants())
	if err != nil || e.PrimaryMetric != models.MetricRewardPerTurn {
		t.Fatalf("created %+v, %v; want primary metric reward_per_turn by default", e, err)
	}
	if _, err := ns.StopExperiment(ctx, e.ID); err != nil {
		t.Fatal(err)
	}
	declared := twoVariants()
	declared.PrimaryMetric = models.MetricPrecision
	e, err = ns.CreateExperiment(ctx, declared)
	if err != nil || e.PrimaryMetric != models.MetricPrecision {
		t.Fatalf("created %+v, %v; want primary metric precision", e, err)
	}
	if got, err := ns.Experiment(ctx, e.ID); err != nil || got.PrimaryMetric != models.MetricPrecision {
		t.Errorf("get = %+v, %v; want precision stored", got, err)
	}
	raw, err := ns.ExperimentReport(ctx, e.ID, client.ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var rep experiment.Report
	if err := json.Unmarshal(raw, &rep); err != nil || rep.PrimaryMetric != models.MetricPrecision {
		t.Errorf("report primary metric %q, %v; want precision", rep.PrimaryMetric, err)
	}
	for _, format := range []string{"text", "html"} {
		b, err := ns.ExperimentReport(ctx, e.ID, client.ReportOptions{Format: format})
		if err != nil || !strings.Contains(string(b), "Ranked by precision") {
			t.Errorf("%s report: %v, want it ranked by precision:\n%.300s", format, err, b)
		}
	}
}
