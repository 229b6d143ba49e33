package client

import (
	"context"
	"net/url"
	"time"

	"github.com/salience-ai/salience/api"
)

// The experiment calls need what the settings calls need: an admin key granted the
// namespace, or any key granted it when the server runs with --settings-writers namespace.

// CreateExperiment starts an A/B experiment in the namespace (CodeConflict while another
// runs). It is not retried: a repeat after a lost answer would meet the first as a
// conflict.
func (n *Namespace) CreateExperiment(ctx context.Context, e api.ExperimentCreate) (*api.Experiment, error) {
	var out api.Experiment
	if err := n.c.do(ctx, call{route: routeExpCreate, params: []string{n.ns}, body: e}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Experiments lists the namespace's experiments, newest first.
func (n *Namespace) Experiments(ctx context.Context) ([]api.Experiment, error) {
	var out api.ExperimentList
	if err := n.c.do(ctx, call{route: routeExperiments, params: []string{n.ns}, idempotent: true}, &out); err != nil {
		return nil, err
	}
	return out.Experiments, nil
}

// Experiment returns one experiment.
func (n *Namespace) Experiment(ctx context.Context, id string) (*api.Experiment, error) {
	var out api.Experiment
	if err := n.c.do(ctx, call{route: routeExperiment, params: []string{n.ns, id}, idempotent: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// StopExperiment stops an experiment; stopping it again changes nothing, so it is retried.
func (n *Namespace) StopExperiment(ctx context.Context, id string) (*api.Experiment, error) {
	var out api.Experiment
	if err := n.c.do(ctx, call{route: routeExpStop, params: []string{n.ns, id}, idempotent: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ReportOptions choose an experiment report's form and time.
type ReportOptions struct {
	Format string    // json (""), csv, html, png or text
	Plot   string    // the PNG's plot: precision ("") or posterior
	AsOf   time.Time // zero: now; else the daily snapshot nearest at or before this UTC date
}

// ExperimentReport returns an experiment's report as the server renders it: the JSON
// document (decode it into the experiment package's Report), CSV, HTML, text or PNG bytes.
func (n *Namespace) ExperimentReport(ctx context.Context, id string, o ReportOptions) ([]byte, error) {
	q := url.Values{}
	if o.Format != "" {
		q.Set("format", o.Format)
	}
	if o.Plot != "" {
		q.Set("plot", o.Plot)
	}
	if !o.AsOf.IsZero() {
		q.Set("as_of", o.AsOf.UTC().Format(time.DateOnly))
	}
	var out []byte
	if err := n.c.do(ctx, call{route: routeExpReport, params: []string{n.ns, id}, query: q, idempotent: true}, &out); err != nil {
		return nil, err
	}
	return out, nil
}
