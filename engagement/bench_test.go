package engagement_test

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/salience-ai/salience/engagement"
	"github.com/salience-ai/salience/learn"
	"github.com/salience-ai/salience/models"
)

// BenchmarkApply applies batches of 100 events with the mix of `salience bench engagement`
// (40 % used, 10 % helpful, 40 % ignored, 10 % dismissed) to surfacings of ten memories a
// turn with four context concepts each; one op is one batch, and every event is the first
// report on its surfacing (a repeat would be a cheap duplicate). Compare with the HTTP
// figure of `salience bench engagement` to see what the server adds.
func BenchmarkApply(b *testing.B) {
	st := openStore(b)
	const mems, turns, perTurn = 1000, 1000, 10
	var ws []*models.MemoryWrite
	for i := range mems {
		ws = append(ws, &models.MemoryWrite{Memory: memory("a", fmt.Sprintf("m%04d", i))})
	}
	must(b, st.CreateMemories(ctx, ws))
	rng := rand.New(rand.NewPCG(1, 2))
	var sids []string
	// seed records another 1,000 turns of surfacings, outside the timed and counted work.
	var seedCPU time.Duration
	seed := func() {
		b.StopTimer()
		cpu := cpuTime()
		for range turns {
			t := len(sids) / perTurn
			var ss []*models.Surfacing
			concepts := []string{fmt.Sprint("w", rng.IntN(300)), fmt.Sprint("w", rng.IntN(300)), fmt.Sprint("w", rng.IntN(300)), fmt.Sprint("w", rng.IntN(300))}
			for r := range perTurn {
				id := fmt.Sprintf("s%06d-%d", t, r)
				sf := surfacing("a", id, fmt.Sprint("c", t%50), fmt.Sprint("t", t), fmt.Sprintf("m%04d", rng.IntN(mems)), models.ModeAmbient, t0.Add(-time.Hour), concepts...)
				sf.Components.Features = learn.Version // as recall records it: the event trains the model, part of the cost
				ss = append(ss, sf)
				sids = append(sids, id)
			}
			must(b, st.RecordSurfacings(ctx, ss, nil))
		}
		seedCPU += cpuTime() - cpu
		b.StartTimer()
	}
	seed()
	svc := engagement.NewService(st, engagement.ServiceOptions{Now: func() time.Time { return t0 }})
	types := []models.EventType{models.EventUsed, models.EventUsed, models.EventUsed, models.EventUsed, models.EventHelpful,
		models.EventIgnored, models.EventIgnored, models.EventIgnored, models.EventIgnored, models.EventDismissed}
	n := 0
	seedCPU = 0
	cpu0 := cpuTime()
	for b.Loop() {
		if n+100 > len(sids) {
			seed()
		}
		evs := make([]*models.Event, 100)
		for i := range evs {
			evs[i] = &models.Event{ID: fmt.Sprint("e", n), SurfacingID: sids[n], Type: types[rng.IntN(len(types))]}
			n++
		}
		res, err := svc.Apply(ctx, "a", evs)
		if err != nil || res.Applied != 100 {
			b.Fatal(err, res)
		}
	}
	b.ReportMetric(float64(b.N*100)/b.Elapsed().Seconds(), "events/s")
	// CPU time per event is steadier than wall time on a shared machine.
	b.ReportMetric(float64((cpuTime()-cpu0-seedCPU).Microseconds())/float64(b.N*100), "cpu-µs/event")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
