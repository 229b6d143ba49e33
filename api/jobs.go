package api

import "time"

// JobRun is one run of a scheduled job (admin).
type JobRun struct {
	ID string `json:"id"`
	// Job is the job's name: decay-scan, edge-decay, dismissal-cooldown, implicit-ignore.
	Job string `json:"job"`
	// Holder is the server replica that ran it.
	Holder string `json:"holder"`
	// Trigger is "cron" for a scheduled tick, "manual" for POST …/run.
	Trigger string    `json:"trigger"`
	Start   time.Time `json:"start"`
	// End is absent while the run is in progress (or when its replica died mid-run).
	End time.Time `json:"end,omitzero"`
	// Items is how many things the run processed: memories queued, edges decayed, memories
	// whose dismissals were halved, events written.
	Items int    `json:"items"`
	Error string `json:"error,omitempty"`
	// Finished is false while running and for a run interrupted by a shutdown or a lost
	// lease; the next run resumes from its checkpoint.
	Finished bool `json:"finished"`
}

// Job is a scheduled job and its latest run (admin).
type Job struct {
	Name string `json:"name"`
	// Spec is the cron schedule in UTC: 5 fields or a descriptor such as "@every 1h".
	Spec string `json:"spec"`
	// Scheduled is false when this server runs with --jobs=false: it lists and triggers jobs
	// but does not tick them.
	Scheduled bool `json:"scheduled"`
	// NextRun is the next tick on this server, absent when not scheduled.
	NextRun time.Time `json:"next_run,omitzero"`
	// Running is true while this server runs the job.
	Running bool `json:"running"`
	// LastRun is the newest recorded run by any replica.
	LastRun *JobRun `json:"last_run,omitempty"`
}

// JobsResponse lists the scheduled jobs (GET /v1/admin/jobs).
type JobsResponse struct {
	Jobs []Job `json:"jobs"`
}

// JobRunsResponse lists a job's runs, newest first (GET /v1/admin/jobs/{name}/runs).
type JobRunsResponse struct {
	Runs []JobRun `json:"runs"`
}

// JobRunResponse is the run a manual trigger started (POST /v1/admin/jobs/{name}/run, 202).
type JobRunResponse struct {
	Run JobRun `json:"run"`
}

// ResurfaceItem is a queued memory due to come back into ambient recall.
type ResurfaceItem struct {
	MemoryID string `json:"memory_id"`
	// DueAt is when the decay policy made it due.
	DueAt time.Time `json:"due_at"`
	// Score is the value of bringing it back: worth × how forgotten (decay.Resurface;
	// policy-specific; higher first).
	Score    float64   `json:"score"`
	QueuedAt time.Time `json:"queued_at"`
	// Memory is the queued memory.
	Memory Memory `json:"memory"`
}

// ResurfacingResponse lists a namespace's resurfacing queue, highest value first
// (GET /v1/namespaces/{ns}/resurfacing).
type ResurfacingResponse struct {
	Items []ResurfaceItem `json:"items"`
}
