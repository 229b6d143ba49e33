//go:build race

package sqlite

// raceEnabled: the race detector slows ingest about tenfold, so the slowest tests shrink.
const raceEnabled = true
