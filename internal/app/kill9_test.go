package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/salience-ai/salience/api"
)

// The kill -9 test: what the server acknowledged survives its process being killed, under a
// bot's whole load at once.

const kill9NS = "/v1/namespaces/durable"

var kill9Topics = []string{"the heron nests by the pond", "the harbour tide table", "the sourdough starter wants feeding"}

// kill9Acks is what a server acknowledged, gathered from the goroutines of a stream.
type kill9Acks struct {
	mu         sync.Mutex
	memories   []kill9Memory         // created: 201
	surfacings []string              // returned by a recall
	events     []kill9Event          // applied: 200
	sent       map[string]kill9Event // every event sent, by surfacing id
}

type kill9Memory struct{ id, content string }

type kill9Event struct{ id, surfacing, typ string }

func (a *kill9Acks) counts() (memories, surfacings, events int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.memories), len(a.surfacings), len(a.events)
}

var kill9Client = &http.Client{Timeout: 10 * time.Second}

// kill9Post posts in to base+path and decodes a 2xx answer into out; false when the server
// did not answer (it is gone) or did not acknowledge.
func kill9Post(ctx context.Context, base, path string, in, out any) bool {
	body, _ := json.Marshal(in)
	req, _ := http.NewRequestWithContext(ctx, "POST", base+path, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	res, err := kill9Client.Do(req)
	if err != nil {
		return false
	}
	defer res.Body.Close()
	return res.StatusCode/100 == 2 && json.NewDecoder(res.Body).Decode(out) == nil
}

// TestKill9LosesNoAcknowledgedWrite runs ingest writers, recall callers (search and
// ambient, in conversations) and engagement reporters (on the surfacing ids those recalls
// return) at once and kills the server with SIGKILL mid-stream, twice: first with every
// kind of request in flight, then, after a restart on the same data directory, just after
// a recall returned while nothing else runs (so the turn is likely still wherever the
// store puts a turn first: nothing else makes the store move it on). After the
// last restart, everything acknowledged before either kill is there: each memory with its
// content, each event with its surfacing and type, and each surfacing id, which engagement
// still accepts.
func TestKill9LosesNoAcknowledgedWrite(t *testing.T) {
	bin := binary(t)
	dir := t.TempDir()
	acks := &kill9Acks{sent: map[string]kill9Event{}}

	p := startBinary(t, bin, dir)
	var seed api.CreateMemoriesRequest
	for i := range 30 {
		seed.Memories = append(seed.Memories, api.MemoryInput{Kind: "fact", Content: fmt.Sprintf("fact %d: %s", i, kill9Topics[i%3])})
	}
	var seeded api.CreateMemoriesResponse
	if !kill9Post(context.Background(), p.base, kill9NS+"/memories", seed, &seeded) {
		t.Fatal("seeding failed")
	}
	for i, m := range seeded.Memories {
		acks.memories = append(acks.memories, kill9Memory{m.ID, seed.Memories[i].Content})
	}
	kill9Stream(t, p, acks, 0, false)
	kill9Stream(t, startBinary(t, bin, dir), acks, 1, true)
	t.Logf("acknowledged before SIGKILL: %d memories, %d surfacings, %d events (%d sent)",
		len(acks.memories), len(acks.surfacings), len(acks.events), len(acks.sent))
	kill9Check(t, startBinary(t, bin, dir), acks)
}

// kill9Stream runs the load on p until each kind of write was acknowledged many times, then
// kills p with SIGKILL: at once, or, when afterRecall, just after a recall answered while
// nothing else runs.
func kill9Stream(t *testing.T, p *process, acks *kill9Acks, round int, afterRecall bool) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var (
		writes, recalls sync.WaitGroup
		pause           atomic.Bool // writers, reporters and recall caller 1 stop
		armed           atomic.Bool // the next recall answered with results kills p
		marker          string      // what the armed recalls search for, set before armed
		kill            sync.Once
		killErr         error
		killed          = make(chan struct{})
	)
	doKill := func() {
		kill.Do(func() { killErr = p.cmd.Process.Signal(syscall.SIGKILL); close(killed) })
	}

	// Writer 0 sends single memories, writer 1 batches of five.
	for w := range 2 {
		writes.Go(func() {
			for i := 0; ctx.Err() == nil && !pause.Load(); i++ {
				var req api.CreateMemoriesRequest
				for j := range 1 + 4*w {
					req.Memories = append(req.Memories, api.MemoryInput{Kind: "fact",
						Content: fmt.Sprintf("round %d writer %d write %d item %d: %s", round, w, i, j, kill9Topics[(i+j)%3])})
				}
				var out api.CreateMemoriesResponse
				if !kill9Post(ctx, p.base, kill9NS+"/memories", req, &out) {
					continue
				}
				acks.mu.Lock()
				for k, m := range out.Memories {
					acks.memories = append(acks.memories, kill9Memory{m.ID, req.Memories[k].Content})
				}
				acks.mu.Unlock()
			}
		})
	}
	// Caller 0 searches, caller 1 recalls ambiently (a threshold of 0, so it volunteers);
	// their surfacing ids go to the reporters. Caller 1 stops with the writers: another
	// turn, read or write could make the store move the killing turn on.
	returned := make(chan string, 1<<16)
	for c := range 2 {
		wg := &recalls
		if c == 1 {
			wg = &writes
		}
		wg.Go(func() {
			for i := 0; ctx.Err() == nil && (c == 0 || !pause.Load()); i++ {
				req := api.RecallRequest{ConversationID: fmt.Sprintf("c%d-%d", c, i%3), TurnID: fmt.Sprintf("r%d-c%d-t%d", round, c, i), Limit: 4}
				if c == 0 {
					req.Mode, req.Query = "search", kill9Topics[i%3]
				} else {
					req.Mode, req.ThresholdPolicy = "ambient", "fixed:0"
					req.Messages = []api.Message{{Speaker: "user", Content: "what about " + kill9Topics[i%3] + "?"}}
				}
				if armed.Load() {
					// A memory nobody was shown yet, in a conversation of its own: the
					// reporters' dismissals may by now hold back every memory a topic finds.
					req.ConversationID, req.Query = fmt.Sprintf("armed-%d-%d", round, i), marker
				}
				var out api.RecallResponse
				if !kill9Post(ctx, p.base, kill9NS+"/recall", req, &out) {
					continue
				}
				if armed.Load() && len(out.Results) > 0 {
					doKill() // at once: the store has had no time to move the turn on
				}
				acks.mu.Lock()
				for _, r := range out.Results {
					acks.surfacings = append(acks.surfacings, r.SurfacingID)
					select {
					case returned <- r.SurfacingID:
					default:
					}
				}
				acks.mu.Unlock()
			}
		})
	}
	// Each reporter reports one outcome on each surfacing it takes, in batches of up to five.
	types := []string{"used", "helpful", "ignored", "dismissed"}
	for r := range 2 {
		writes.Go(func() {
			for i := 0; ctx.Err() == nil && !pause.Load(); i++ {
				var req api.EngagementRequest
			take:
				for len(req.Events) < 5 {
					select {
					case id := <-returned:
						n := len(req.Events)
						req.Events = append(req.Events, api.EngagementEvent{ID: fmt.Sprintf("r%d-e%d-%d-%d", round, r, i, n),
							SurfacingID: id, Type: types[(i+n+r)%4]})
					case <-ctx.Done():
						return
					default:
						if len(req.Events) > 0 || pause.Load() {
							break take
						}
						time.Sleep(time.Millisecond)
					}
				}
				if len(req.Events) == 0 {
					continue // paused with nothing to report
				}
				acks.mu.Lock()
				for _, e := range req.Events {
					acks.sent[e.SurfacingID] = kill9Event{e.ID, e.SurfacingID, e.Type}
				}
				acks.mu.Unlock()
				var out api.EngagementResponse
				if !kill9Post(ctx, p.base, kill9NS+"/engagement", req, &out) {
					continue
				}
				acks.mu.Lock()
				for k, res := range out.Results {
					if e := req.Events[k]; res.Status == "applied" {
						acks.events = append(acks.events, kill9Event{e.ID, e.SurfacingID, e.Type})
					} else {
						t.Errorf("event %+v: %s %+v", e, res.Status, res.Error)
					}
				}
				acks.mu.Unlock()
			}
		})
	}

	// Each round adds at least this many acknowledgements of each kind before its kill.
	m0, s0, e0 := acks.counts()
	deadline := time.Now().Add(30 * time.Second)
	for {
		m, s, e := acks.counts()
		if m-m0 >= 300 && s-s0 >= 300 && e-e0 >= 150 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("round %d: in 30 s only %d memories, %d surfacings and %d events acknowledged", round, m-m0, s-s0, e-e0)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if afterRecall {
		pause.Store(true)
		writes.Wait()
		marker = fmt.Sprintf("marker of round %d: a quokka juggling teacups", round)
		mark := api.CreateMemoriesRequest{Memories: []api.MemoryInput{{Kind: "fact", Content: marker}}}
		var marked api.CreateMemoriesResponse
		if !kill9Post(ctx, p.base, kill9NS+"/memories", mark, &marked) {
			t.Fatal("writing the armed recalls' memory failed")
		}
		acks.mu.Lock()
		acks.memories = append(acks.memories, kill9Memory{marked.Memories[0].ID, marker})
		acks.mu.Unlock()
		armed.Store(true)
	} else {
		doKill()
	}
	select {
	case <-killed:
		if killErr != nil {
			t.Fatal(killErr)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no recall answered in 10 s")
	}
	err := p.cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the server did not die of SIGKILL: %v", err)
	}
	stop()
	writes.Wait()
	recalls.Wait()
}

// kill9Check checks that p, restarted after the kills, has everything in acks.
func kill9Check(t *testing.T, p *process, acks *kill9Acks) {
	t.Helper()
	for _, m := range acks.memories {
		res, err := kill9Client.Get(p.base + kill9NS + "/memories/" + m.id)
		if err != nil {
			t.Fatal(err)
		}
		var got api.Memory
		err = json.NewDecoder(res.Body).Decode(&got)
		res.Body.Close()
		if res.StatusCode != 200 || err != nil || got.Content != m.content {
			t.Errorf("acknowledged memory %s lost after SIGKILL: %d %q", m.id, res.StatusCode, got.Content)
		}
	}
	engage := func(req api.EngagementRequest) []api.EngagementResult {
		t.Helper()
		var out api.EngagementResponse
		if !kill9Post(context.Background(), p.base, kill9NS+"/engagement", req, &out) || len(out.Results) != len(req.Events) {
			t.Fatalf("engagement after restart failed: %+v", out)
		}
		return out.Results
	}

	// Each acknowledged event is recorded with its surfacing: sent again it is a duplicate,
	// and its id on another surfacing a conflict.
	for part := range slices.Chunk(acks.events, 500) {
		var again, moved api.EngagementRequest
		for i, e := range part {
			again.Events = append(again.Events, api.EngagementEvent{ID: e.id, SurfacingID: e.surfacing, Type: e.typ})
			moved.Events = append(moved.Events, api.EngagementEvent{ID: e.id, SurfacingID: part[(i+1)%len(part)].surfacing, Type: e.typ})
		}
		for i, r := range engage(again) {
			if r.Status != "duplicate" {
				t.Errorf("acknowledged event %+v sent again: %s %+v, want duplicate", part[i], r.Status, r.Error)
			}
		}
		for i, r := range engage(moved) {
			if r.Status != "rejected" || r.Error == nil || r.Error.Code != "conflict" {
				t.Errorf("acknowledged event %+v on another surfacing: %s %+v, want a conflict", part[i], r.Status, r.Error)
			}
		}
	}

	// Each outcome is recorded with its type: as many as acknowledged, at most as many as sent.
	res, err := kill9Client.Get(p.base + kill9NS + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	var metrics api.MetricsResponse
	err = json.NewDecoder(res.Body).Decode(&metrics)
	res.Body.Close()
	if res.StatusCode != 200 || err != nil {
		t.Fatalf("metrics: %d %v", res.StatusCode, err)
	}
	acked, sent := map[string]int{}, map[string]int{}
	for _, e := range acks.events {
		acked[e.typ]++
	}
	for _, e := range acks.sent {
		sent[e.typ]++
	}
	o := metrics.Overall
	for typ, got := range map[string]int{"used": o.Used, "helpful": o.Helpful, "ignored": o.Ignored, "dismissed": o.Dismissed} {
		if got < acked[typ] || got > sent[typ] {
			t.Errorf("%d %s outcomes after restart, want from %d acknowledged to %d sent", got, typ, acked[typ], sent[typ])
		}
	}
	if o.Surfaced < len(acks.surfacings) {
		t.Errorf("%d surfacings after restart, fewer than the %d returned", o.Surfaced, len(acks.surfacings))
	}

	// Every returned surfacing id is accepted: a report on it takes the outcome when none was
	// sent, and is a duplicate when one was acknowledged.
	reported := map[string]bool{}
	for _, e := range acks.events {
		reported[e.surfacing] = true
	}
	for part := range slices.Chunk(acks.surfacings, 500) {
		var late api.EngagementRequest
		for _, id := range part {
			late.Events = append(late.Events, api.EngagementEvent{ID: "late-" + id, SurfacingID: id, Type: "ignored"})
		}
		for i, r := range engage(late) {
			id := part[i]
			_, sent := acks.sent[id]
			if r.Status == "rejected" || reported[id] && r.Status != "duplicate" || !sent && r.Status != "applied" {
				t.Errorf("surfacing %s returned before SIGKILL (outcome acknowledged %v, sent %v): %s %+v", id, reported[id], sent, r.Status, r.Error)
			}
		}
	}
}
