package main

import (
	"os"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"time"

	"gonum.org/v1/gonum/stat"
)

// startCPUProfile starts a CPU profile into path ("" = none) and returns its stop function.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// startTrace starts an execution trace into path ("" = none) and returns its stop.
func startTrace(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := trace.Start(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { trace.Stop(); f.Close() }, nil
}

// percentiles sorts latencies and returns a percentile function in milliseconds: nearest
// rank (gonum's stat.Empirical, as experiment.Percentiles), so a percentile is always an
// observed latency. p is clamped to [0, 1]; no latencies give 0.
func percentiles(lat []time.Duration) func(p float64) float64 {
	slices.Sort(lat)
	ms := make([]float64, len(lat))
	for i, d := range lat {
		ms[i] = float64(d.Microseconds()) / 1000
	}
	return func(p float64) float64 {
		if len(ms) == 0 {
			return 0
		}
		return stat.Quantile(min(max(p, 0), 1), stat.Empirical, ms, nil)
	}
}
