package client

import (
	"context"
	"net/url"
	"time"

	"github.com/salience-ai/salience/api"
)

// Health returns nil when the server answers its liveness probe.
func (c *Client) Health(ctx context.Context) error {
	return c.do(ctx, call{route: routeHealth, idempotent: true}, nil)
}

// Ready returns nil when the server has loaded its indexes and serves the API; while it
// loads, an *Error with CodeUnavailable.
func (c *Client) Ready(ctx context.Context) error {
	return c.do(ctx, call{route: routeReady}, nil)
}

// WaitReady polls Ready every interval until the server is ready or ctx is done, for a bot
// started together with its server.
func (c *Client) WaitReady(ctx context.Context, interval time.Duration) error {
	for {
		err := c.Ready(ctx)
		if err == nil {
			return nil
		}
		if serr := sleepCtx(ctx, interval); serr != nil {
			return err
		}
	}
}

// The admin calls need an admin key granted the namespace they act on, and the jobs calls
// one granted "*" (CodeForbidden otherwise).

// Namespaces lists every namespace that holds a memory and that the key administers (all of
// them for a "*" admin key).
func (c *Client) Namespaces(ctx context.Context) ([]string, error) {
	var out api.NamespacesResponse
	if err := c.do(ctx, call{route: routeNamespaces, idempotent: true}, &out); err != nil {
		return nil, err
	}
	return out.Namespaces, nil
}

// NamespaceEmbedders lists every namespace that holds a memory with the embedder of each one
// that holds vectors, and the embedder the server uses.
func (c *Client) NamespaceEmbedders(ctx context.Context) (*api.NamespacesResponse, error) {
	var out api.NamespacesResponse
	if err := c.do(ctx, call{route: routeNamespaces, idempotent: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Jobs lists the scheduled jobs with their schedule and latest run.
func (c *Client) Jobs(ctx context.Context) ([]api.Job, error) {
	var out api.JobsResponse
	if err := c.do(ctx, call{route: routeJobs, idempotent: true}, &out); err != nil {
		return nil, err
	}
	return out.Jobs, nil
}

// JobRuns returns a job's runs, newest first; limit is 1..1000, 0 means the server's
// default (20). An unknown job is CodeNotFound.
func (c *Client) JobRuns(ctx context.Context, job string, limit int) ([]api.JobRun, error) {
	var out api.JobRunsResponse
	if err := c.do(ctx, call{route: routeJobRuns, params: []string{job}, query: limitQuery(limit), idempotent: true}, &out); err != nil {
		return nil, err
	}
	return out.Runs, nil
}

// Relearn rebuilds a namespace's relevance model from its event log, in sequence order.
// When prune-history has deleted the log's oldest events it is refused (CodeConflict)
// unless fromKept, which rebuilds from the kept events only. Retried: a rebuild from the
// same log stores the same model.
func (c *Client) Relearn(ctx context.Context, ns string, fromKept bool) (*api.RelearnResponse, error) {
	var out api.RelearnResponse
	cl := call{route: routeRelearn, params: []string{ns}, idempotent: true}
	if fromKept {
		cl.query = url.Values{"from_kept": {"true"}}
	}
	if err := c.do(ctx, cl, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteNamespace deletes a namespace and everything it holds — memories, surfacings,
// events, conversations, experiments, the learned model, settings — and says how much went.
// Retried: a second call deletes what the first left, and nothing when it finished.
func (c *Client) DeleteNamespace(ctx context.Context, ns string) (*api.NamespaceDeletedResponse, error) {
	var out api.NamespaceDeletedResponse
	if err := c.do(ctx, call{route: routeDeleteNS, params: []string{ns}, idempotent: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RunJob starts a manual run of a job and returns the run as it started; JobRuns shows how
// it ended. CodeConflict when the job is already running. Not retried: a repeat would
// start a second run.
func (c *Client) RunJob(ctx context.Context, job string) (*api.JobRun, error) {
	var out api.JobRunResponse
	if err := c.do(ctx, call{route: routeJobRun, params: []string{job}}, &out); err != nil {
		return nil, err
	}
	return &out.Run, nil
}
