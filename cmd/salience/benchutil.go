package main

import (
	"math"
	"os"
	"runtime/pprof"
	"slices"
	"time"
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

// percentiles sorts latencies and returns a nearest-rank percentile function in milliseconds.
func percentiles(lat []time.Duration) func(p float64) float64 {
	slices.Sort(lat)
	return func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		i := int(math.Ceil(p*float64(len(lat)))) - 1
		return float64(lat[min(max(i, 0), len(lat)-1)].Microseconds()) / 1000
	}
}
