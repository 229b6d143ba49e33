package storetest

import (
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

func testQueue(t *testing.T, open func(t *testing.T) models.Store) {
	s := open(t)
	item := func(namespace, id string, score float64) *models.ResurfaceItem {
		return &models.ResurfaceItem{Namespace: namespace, MemoryID: id, Score: score, DueAt: at(int(score)), QueuedAt: at(100)}
	}
	// Out of score order; m-tie-a and m-tie-b tie (the memory id breaks it).
	mustNil(t, s.Enqueue(ctx, []*models.ResurfaceItem{
		item(ns, "m1", 1), item(ns, "m3", 3), item(ns, "m-tie-b", 2), item(ns, "m-tie-a", 2), item(other, "o1", 9),
	}))
	queued := func(namespace string, limit int) []string {
		t.Helper()
		q, err := s.Queue(ctx, namespace, limit)
		mustNil(t, err)
		ids := make([]string, len(q))
		for i, it := range q {
			ids[i] = it.MemoryID
		}
		return ids
	}
	assertIDs(t, "queue", queued(ns, 0), []string{"m3", "m-tie-a", "m-tie-b", "m1"})
	assertIDs(t, "limit", queued(ns, 2), []string{"m3", "m-tie-a"})
	assertIDs(t, "other namespace", queued(other, 0), []string{"o1"})

	q, err := s.Queue(ctx, ns, 1)
	mustNil(t, err)
	assertEqual(t, "full item", q, []*models.ResurfaceItem{item(ns, "m3", 3)})

	// Enqueue replaces: one item per memory.
	mustNil(t, s.Enqueue(ctx, []*models.ResurfaceItem{item(ns, "m1", 5)}))
	assertIDs(t, "after replacing m1", queued(ns, 0), []string{"m1", "m3", "m-tie-a", "m-tie-b"})

	mustNil(t, s.Dequeue(ctx, ns, []string{"m3", "missing", "o1"}))
	assertIDs(t, "after dequeue", queued(ns, 0), []string{"m1", "m-tie-a", "m-tie-b"})
	assertIDs(t, "other namespace untouched", queued(other, 0), []string{"o1"})

	_, err = s.Queue(ctx, ns, -1)
	wantCode(t, err, models.EINVALID)
	wantCode(t, s.Enqueue(ctx, []*models.ResurfaceItem{{Namespace: ns}}), models.EINVALID)
	wantCode(t, s.Dequeue(ctx, "", []string{"m1"}), models.EINVALID)
}

func testLeases(t *testing.T, open func(t *testing.T) models.Store) {
	s := open(t)
	const ttl = time.Minute
	acquire := func(holder string, now time.Time, want bool) {
		t.Helper()
		ok, err := s.AcquireLease(ctx, "decay-scan", holder, ttl, now)
		mustNil(t, err)
		if ok != want {
			t.Fatalf("AcquireLease(%s at %s) = %v, want %v", holder, now.Format(time.TimeOnly), ok, want)
		}
	}
	acquire("a", at(0), true)                          // free
	acquire("b", at(0).Add(30*time.Second), false)     // held by a
	acquire("a", at(0).Add(50*time.Second), true)      // renewal: now held until 1:50
	acquire("b", at(1).Add(10*time.Second), false)     // the renewal counts
	acquire("b", at(1).Add(50*time.Second), true)      // expired: b takes over
	acquire("a", at(1).Add(55*time.Second), false)     // a lost it
	mustNil(t, s.ReleaseLease(ctx, "decay-scan", "a")) // not a's: nothing happens
	acquire("a", at(2), false)
	mustNil(t, s.ReleaseLease(ctx, "decay-scan", "b"))
	acquire("a", at(2), true) // released: free again

	// Leases are independent by name.
	ok, err := s.AcquireLease(ctx, "edge-decay", "b", ttl, at(2))
	mustNil(t, err)
	if !ok {
		t.Fatal("another lease name is blocked")
	}

	_, err = s.AcquireLease(ctx, "", "a", ttl, at(0))
	wantCode(t, err, models.EINVALID)
	_, err = s.AcquireLease(ctx, "x", "", ttl, at(0))
	wantCode(t, err, models.EINVALID)
	_, err = s.AcquireLease(ctx, "x", "a", 0, at(0))
	wantCode(t, err, models.EINVALID)
}

func testJobRuns(t *testing.T, open func(t *testing.T) models.Store) {
	s := open(t)
	run := func(id, job string, minute int) *models.JobRun {
		return &models.JobRun{ID: id, Job: job, Holder: "host-1", Trigger: "cron", Start: at(minute)}
	}
	for _, r := range []*models.JobRun{
		run("r2", "decay-scan", 20), run("r4", "edge-decay", 40), run("r1", "decay-scan", 10), run("r3", "decay-scan", 30),
	} {
		mustNil(t, s.RecordJobRun(ctx, r))
	}
	finished := run("r3", "decay-scan", 30)
	finished.End, finished.Items, finished.Error, finished.Finished, finished.Trigger = at(31), 42, "partial: 1 failed", true, "manual"
	mustNil(t, s.RecordJobRun(ctx, finished)) // replaces by id

	ids := func(job string, limit int) []string {
		t.Helper()
		rs, err := s.FindJobRuns(ctx, job, limit)
		mustNil(t, err)
		out := make([]string, len(rs))
		for i, r := range rs {
			out[i] = r.ID
		}
		return out
	}
	assertIDs(t, "one job, newest first", ids("decay-scan", 0), []string{"r3", "r2", "r1"})
	assertIDs(t, "all jobs", ids("", 0), []string{"r4", "r3", "r2", "r1"})
	assertIDs(t, "limit", ids("decay-scan", 1), []string{"r3"})
	assertIDs(t, "unknown job", ids("nope", 0), nil)

	rs, err := s.FindJobRuns(ctx, "decay-scan", 1)
	mustNil(t, err)
	assertEqual(t, "replaced run", rs, []*models.JobRun{finished})

	wantCode(t, s.RecordJobRun(ctx, &models.JobRun{Job: "x"}), models.EINVALID)
	wantCode(t, s.RecordJobRun(ctx, &models.JobRun{ID: "x"}), models.EINVALID)
	_, err = s.FindJobRuns(ctx, "", -1)
	wantCode(t, err, models.EINVALID)
}

func testState(t *testing.T, open func(t *testing.T) models.Store) {
	s := open(t)
	v, err := s.GetState(ctx, "decay-scan/cursor")
	mustNil(t, err)
	if v != "" {
		t.Fatalf("missing key = %q, want empty", v)
	}
	mustNil(t, s.SetState(ctx, "decay-scan/cursor", "01J0001"))
	mustNil(t, s.SetState(ctx, "other", "x"))
	mustNil(t, s.SetState(ctx, "decay-scan/cursor", "01J0002"))
	for key, want := range map[string]string{"decay-scan/cursor": "01J0002", "other": "x"} {
		v, err := s.GetState(ctx, key)
		mustNil(t, err)
		if v != want {
			t.Fatalf("GetState(%s) = %q, want %q", key, v, want)
		}
	}
	wantCode(t, s.SetState(ctx, "", "x"), models.EINVALID)
	_, err = s.GetState(ctx, "")
	wantCode(t, err, models.EINVALID)
}
