package server

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/jobs"
	"github.com/salience-ai/salience/models"
)

// JobScheduler is what the jobs admin routes call (jobs.Scheduler). Runs is ENOTFOUND for
// an unknown job; Trigger is ENOTFOUND for an unknown job, ECONFLICT when the job is running
// (here, or on the replica holding its lease) and EUNAVAILABLE while the server stops.
type JobScheduler interface {
	Jobs(ctx context.Context) ([]jobs.Status, error)
	Runs(ctx context.Context, name string, limit int) ([]*models.JobRun, error)
	Trigger(ctx context.Context, name string) (*models.JobRun, error)
}

// ResurfacingQueue is the part of models.Store the resurfacing route reads.
type ResurfacingQueue interface {
	Queue(ctx context.Context, ns string, limit int) ([]*models.ResurfaceItem, error)
	GetMemories(ctx context.Context, ns string, ids []string) ([]*models.Memory, error)
}

// Limits of the listing routes here.
const (
	defaultRunsLimit  = jobs.DefaultRunsLimit
	maxRunsLimit      = jobs.MaxRunsLimit
	defaultQueueLimit = 100
	maxQueueLimit     = 1000
)

// errNoJobs answers the jobs routes of a server built without a scheduler.
var errNoJobs = unavailable("jobs are not configured on this server")

// listJobs handles GET /v1/admin/jobs.
func (s *Server) listJobs(c *gin.Context) {
	if s.jobs == nil {
		fail(c, errNoJobs)
		return
	}
	if _, err := parseLimitQuery(c.Request.URL.Query(), 0, 0); err != nil {
		fail(c, err)
		return
	}
	sts, err := s.jobs.Jobs(c.Request.Context())
	if err != nil {
		fail(c, err)
		return
	}
	out := api.JobsResponse{Jobs: make([]api.Job, len(sts))}
	for i, st := range sts {
		j := api.Job{Name: st.Name, Spec: st.Spec, Scheduled: st.Scheduled, NextRun: st.Next, Running: st.Running != nil}
		if st.Last != nil {
			r := jobRunToAPI(st.Last)
			j.LastRun = &r
		}
		out.Jobs[i] = j
	}
	c.JSON(http.StatusOK, out)
}

// jobRuns handles GET /v1/admin/jobs/:name/runs?limit=N (1..1000, default 20).
func (s *Server) jobRuns(c *gin.Context) {
	if s.jobs == nil {
		fail(c, errNoJobs)
		return
	}
	limit, err := parseLimitQuery(c.Request.URL.Query(), defaultRunsLimit, maxRunsLimit)
	if err != nil {
		fail(c, err)
		return
	}
	runs, err := s.jobs.Runs(c.Request.Context(), c.Param("name"), limit)
	if err != nil {
		fail(c, err)
		return
	}
	out := api.JobRunsResponse{Runs: make([]api.JobRun, len(runs))}
	for i, r := range runs {
		out.Runs[i] = jobRunToAPI(r)
	}
	c.JSON(http.StatusOK, out)
}

// runJob handles POST /v1/admin/jobs/:name/run: it starts a manual run and answers 202 with
// the run as it started; GET …/runs shows how it ended. The body is ignored.
func (s *Server) runJob(c *gin.Context) {
	if s.jobs == nil {
		fail(c, errNoJobs)
		return
	}
	run, err := s.jobs.Trigger(c.Request.Context(), c.Param("name"))
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusAccepted, api.JobRunResponse{Run: jobRunToAPI(run)})
}

func jobRunToAPI(r *models.JobRun) api.JobRun {
	return api.JobRun{ID: r.ID, Job: r.Job, Holder: r.Holder, Trigger: r.Trigger, Start: r.Start, End: r.End,
		Items: r.Items, Error: r.Error, Finished: r.Finished}
}

// listResurfacing handles GET /v1/namespaces/:ns/resurfacing?limit=N (1..1000, default 100):
// the queue the decay scan filled, highest value first, each item with its memory. An item
// whose memory was deleted since, or changed so it would no longer be queued (retired by
// invalid_at, made sensitive, dismissed into a cooldown), is left out: the scan rebuilds
// the queue hourly, and the list must not offer until then what recall would not.
func (s *Server) listResurfacing(c *gin.Context) {
	if s.queue == nil {
		fail(c, unavailable("the resurfacing queue is not configured on this server"))
		return
	}
	limit, err := parseLimitQuery(c.Request.URL.Query(), defaultQueueLimit, maxQueueLimit)
	if err != nil {
		fail(c, err)
		return
	}
	ns := c.Param("ns")
	items, err := s.queue.Queue(c.Request.Context(), ns, limit)
	if err != nil {
		fail(c, err)
		return
	}
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.MemoryID
	}
	ms, err := s.queue.GetMemories(c.Request.Context(), ns, ids)
	if err != nil {
		fail(c, err)
		return
	}
	now := s.now()
	byID := make(map[string]*models.Memory, len(ms))
	for _, m := range ms {
		byID[m.ID] = m
	}
	out := api.ResurfacingResponse{Items: make([]api.ResurfaceItem, 0, len(items))}
	for _, it := range items {
		m := byID[it.MemoryID]
		if m == nil || !m.Resurfaceable(now) {
			continue
		}
		out.Items = append(out.Items, api.ResurfaceItem{MemoryID: it.MemoryID, DueAt: it.DueAt, Score: it.Score,
			QueuedAt: it.QueuedAt, Memory: memoryToAPI(m)})
	}
	c.JSON(http.StatusOK, out)
}

// parseLimitQuery reads the only query parameter the listing routes here take, limit, an
// integer from 1 to max (def when absent). With max 0 no parameter at all is accepted. Any
// other parameter is EINVALID naming it, so a typo is not silently ignored.
func parseLimitQuery(q url.Values, def, max int) (int, error) {
	known := []string{"limit"}
	if max == 0 {
		known = nil
	}
	if err := onlyQuery(q, known...); err != nil {
		return 0, err
	}
	vs, ok := q["limit"]
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(vs[0])
	if err != nil || n < 1 || n > max {
		return 0, models.Invalid("limit", "limit must be an integer from 1 to %d", max)
	}
	return n, nil
}
