package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestPercentilesNearestRank: nearest rank over 1..20 ms (p·n rounded up), an observed
// latency, microseconds kept; no latencies give 0.
func TestPercentilesNearestRank(t *testing.T) {
	var lat []time.Duration
	for i := 20; i >= 1; i-- {
		lat = append(lat, time.Duration(i)*time.Millisecond+500*time.Microsecond)
	}
	pct := percentiles(lat)
	for _, tc := range []struct{ p, want float64 }{
		{0, 1.5}, {0.5, 10.5}, {0.9, 18.5}, {0.95, 19.5}, {0.99, 20.5}, {1, 20.5},
	} {
		if got := pct(tc.p); got != tc.want {
			t.Errorf("p%v = %v ms, want %v", tc.p*100, got, tc.want)
		}
	}
	if got := percentiles(nil)(0.95); got != 0 {
		t.Errorf("no latencies: p95 = %v, want 0", got)
	}
}

// TestMeasureScaling: every call once; each round's block at concurrency 1 runs one call at
// a time and the other's n at once, the order alternating by round; calls that wait (not
// compute) scale with the callers, so the ratio is about n; and the CPU a call is what the
// clock read moved by in each concurrency's blocks, the cores busy that over the wall time.
func TestMeasureScaling(t *testing.T) {
	const n, rounds, calls = 3, 4, 30
	var mu sync.Mutex
	seen := map[int]bool{}
	inFlight, peak := 0, map[int]int{} // peak in-flight calls by block
	waitUntil := map[int]time.Time{}   // by block: how long its calls may wait for n at once
	// A CPU clock the calls move: 1 ms for each call at concurrency 1, 2 ms for each at n
	// (its blocks are 1, 2, 5, 6 of 0–7: the rounds alternate).
	var clock atomic.Int64
	cpu := func() time.Duration { return time.Duration(clock.Load()) }
	res, err := measureScaling(n, rounds, calls, cpu, func(i int) error {
		b := i / calls
		clock.Add(int64(time.Millisecond) * int64(1+(b/2+b)%2))
		mu.Lock()
		if seen[i] {
			t.Errorf("call %d made twice", i)
		}
		seen[i] = true
		inFlight++
		peak[i/calls] = max(peak[i/calls], inFlight)
		if _, ok := waitUntil[b]; !ok {
			waitUntil[b] = time.Now().Add(time.Second)
		}
		deadline := waitUntil[b]
		mu.Unlock()
		// In a block meant to run n at once, its first calls wait (a second at most, for the
		// whole block) until n are in flight, so a loaded machine's scheduling cannot hide the
		// concurrency.
		for (b/2)%2 != b%2 && time.Now().Before(deadline) {
			mu.Lock()
			reached := peak[b] >= n
			mu.Unlock()
			if reached {
				break
			}
			time.Sleep(100 * time.Microsecond)
		}
		time.Sleep(2 * time.Millisecond)
		mu.Lock()
		inFlight--
		mu.Unlock()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2*rounds*calls {
		t.Fatalf("%d calls made, want %d", len(seen), 2*rounds*calls)
	}
	for b := range 2 * rounds {
		want := n // rounds 0, 2: 1 then n; rounds 1, 3: n then 1
		if (b/2)%2 == b%2 {
			want = 1
		}
		if peak[b] != want {
			t.Errorf("block %d ran %d calls at once, want %d (peaks %v)", b, peak[b], want, peak)
		}
	}
	// The median round is the tight check: a loaded machine oversleeps a round's short
	// sleeps now and then (a one-caller round at 9 times the rate of its pair was seen while
	// a soak ran beside the tests), which moves the whole run's ratio but not the median.
	if res.median < 2 || res.median > 3.3 || res.ratio < 1.5 || res.ratio > 6 || res.lo > res.median || res.median > res.hi {
		t.Errorf("sleeping calls at concurrency %d: ratio %.2f (rounds %.2f–%.2f, median %.2f), want about %d", n, res.ratio, res.lo, res.hi, res.median, n)
	}
	if got := res.qpsN / res.qps1; got != res.ratio {
		t.Errorf("ratio %v, qps %v / %v = %v", res.ratio, res.qpsN, res.qps1, got)
	}
	if res.cpu1 != 1 || res.cpuN != 2 {
		t.Errorf("CPU a call %v ms at 1 and %v at %d, want 1 and 2", res.cpu1, res.cpuN, n)
	}
	// busy = CPU ÷ wall = CPU a call · qps, and the ratio is the bound times the share busy.
	if math.Abs(res.busy1-res.cpu1/1000*res.qps1) > 1e-9 || math.Abs(res.busyN-res.cpuN/1000*res.qpsN) > 1e-9 {
		t.Errorf("busy %v and %v, want %v and %v", res.busy1, res.busyN, res.cpu1/1000*res.qps1, res.cpuN/1000*res.qpsN)
	}
	if b := res.bound(2); math.Abs(b*res.busyN/2-res.ratio) > 1e-9 || math.Abs(b-2/(0.002*res.qps1)) > 1e-9 {
		t.Errorf("bound %v: ratio %v, busy %v", b, res.ratio, res.busyN)
	}
	if (scalingResult{}).bound(2) != 0 {
		t.Error("no CPU measured: bound not 0")
	}

	boom := errors.New("boom")
	if _, err := measureScaling(2, 2, 5, processCPU, func(i int) error {
		if i == 7 {
			return boom
		}
		return nil
	}); !errors.Is(err, boom) {
		t.Fatalf("a failing call: %v, want it returned", err)
	}
}

// TestBenchRecallScaling: `bench recall --scaling 2` reports both throughputs and their
// ratio, in its text and in the last line's JSON, consistently; bad values are refused.
func TestBenchRecallScaling(t *testing.T) {
	var buf bytes.Buffer
	err := benchRecall(context.Background(), []string{"--memories", "100", "--queries", "10", "--scaling", "2",
		"--scaling-rounds", "2", "--scaling-calls", "8", "--data", t.TempDir()}, &buf, &buf)
	out := buf.String()
	if err != nil {
		t.Fatalf("bench recall --scaling 2: %v\n%s", err, out)
	}
	if !strings.Contains(out, "scaling (2 rounds of 8 calls at concurrency 1 and 2, alternating): ") {
		t.Fatalf("no scaling line:\n%s", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var got struct {
		Q1    *float64 `json:"scaling_qps_1"`
		QN    *float64 `json:"scaling_qps_n"`
		Ratio *float64 `json:"scaling_ratio"`
		Host  *float64 `json:"host_scaling_ratio"`
		CPU1  *float64 `json:"scaling_cpu_ms_1"`
		CPUN  *float64 `json:"scaling_cpu_ms_n"`
		Busy1 *float64 `json:"scaling_busy_1"`
		BusyN *float64 `json:"scaling_busy_n"`
		Bound *float64 `json:"scaling_bound"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil || got.Q1 == nil || got.QN == nil || got.Ratio == nil {
		t.Fatalf("last line lacks the scaling figures (%v):\n%s", err, out)
	}
	if *got.Q1 <= 0 || *got.QN <= 0 || math.Abs(*got.Ratio - *got.QN / *got.Q1) > 0.01 {
		t.Fatalf("scaling qps %v and %v, ratio %v:\n%s", *got.Q1, *got.QN, *got.Ratio, out)
	}
	// The text prints two decimals of what the JSON gives to three: they agree to the rounding
	// (1.3454 prints 1.35 and 1.345, which read back as 1.34 — so compare numbers, not text).
	if got.Host == nil || *got.Host <= 0 || !printedNear(out, `2 independent SHA-256 loops ×([0-9.]+) of one`, *got.Host) {
		t.Fatalf("the host's ceiling is missing or differs between text and JSON:\n%s", out)
	}
	if got.CPU1 == nil || got.CPUN == nil || got.Busy1 == nil || got.BusyN == nil || got.Bound == nil || *got.CPU1 <= 0 || *got.CPUN <= 0 || *got.Bound <= 0 {
		t.Fatalf("the scaling's CPU figures are missing:\n%s", out)
	}
	// Printed rounded, the identity ratio = bound · busy ÷ cores holds to the rounding.
	cores := min(2, runtime.GOMAXPROCS(0))
	if math.Abs(*got.Bound**got.BusyN/float64(cores)-*got.Ratio) > 0.02**got.Ratio+0.01 {
		t.Errorf("ratio %v, bound %v, cores busy %v of %d:\n%s", *got.Ratio, *got.Bound, *got.BusyN, cores, out)
	}
	if !printedNear(out, `([0-9.]+) ms a call at 2, keeping`, *got.CPUN) || !printedNear(out, `keeping ([0-9.]+) of \d+ busy`, *got.BusyN) ||
		!printedNear(out, fmt.Sprintf(`%d busy cores give at most ×([0-9.]+)`, cores), *got.Bound) {
		t.Errorf("the scaling's CPU line differs from the JSON:\n%s", out)
	}
	for _, bad := range [][]string{{"--scaling", "-1"}, {"--scaling", "2", "--scaling-rounds", "0"}, {"--scaling", "2", "--scaling-calls", "0"}} {
		if err := benchRecall(context.Background(), append(bad, "--memories", "10", "--data", t.TempDir()), &buf, &buf); err == nil || !strings.Contains(err.Error(), "must be positive") {
			t.Errorf("%v: %v, want refused", bad, err)
		}
	}
}

// TestBenchRecallRuns: `bench recall --runs 3` times three runs, each on a copy of the kept
// corpus, which none of them changes; it prints each run's figures and their median, in its
// text and in the last line's JSON, consistently; combinations it cannot time are refused.
func TestBenchRecallRuns(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		var buf bytes.Buffer
		args = append([]string{"--memories", "150", "--queries", "12", "--data", dir}, args...)
		if err := benchRecall(context.Background(), args, &buf, &buf); err != nil {
			t.Fatalf("bench recall %v: %v\n%s", args, err, buf.String())
		}
		return buf.String()
	}
	run("--runs", "1") // builds the corpus (in place, as before --runs)
	before, err := os.ReadFile(filepath.Join(dir, "bench.db"))
	if err != nil {
		t.Fatal(err)
	}
	clockBefore, _ := os.ReadFile(filepath.Join(dir, "bench.clock"))
	out := run("--runs", "3")
	for i := 1; i <= 3; i++ {
		if !strings.Contains(out, fmt.Sprintf("run %d of 3, on a copy of the corpus:\n", i)) {
			t.Fatalf("no run %d:\n%s", i, out)
		}
	}
	if n := strings.Count(out, "\nrecall (sqlite store, search, 150 memories, 12 queries, concurrency 1): "); n != 3 {
		t.Fatalf("%d timed runs reported, want 3:\n%s", n, out)
	}
	if !strings.Contains(out, "median of 3 runs: ") {
		t.Fatalf("no median line:\n%s", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var got struct {
		Runs int       `json:"runs"`
		P95  float64   `json:"p95_ms"`
		Each []float64 `json:"p95_ms_each"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
		t.Fatalf("last line: %v\n%s", err, out)
	}
	if got.Runs != 3 || len(got.Each) != 3 {
		t.Fatalf("last line: %+v, want 3 runs", got)
	}
	sorted := slices.Sorted(slices.Values(got.Each))
	if got.P95 != sorted[1] {
		t.Fatalf("p95 %v, want the median of %v", got.P95, got.Each)
	}
	after, err := os.ReadFile(filepath.Join(dir, "bench.db"))
	if err != nil {
		t.Fatal(err)
	}
	clockAfter, _ := os.ReadFile(filepath.Join(dir, "bench.clock"))
	if !bytes.Equal(before, after) || !bytes.Equal(clockBefore, clockAfter) {
		t.Fatal("the runs on copies changed the kept corpus")
	}
	for _, bad := range [][]string{{"--runs", "0"}, {"--runs", "2", "--scaling", "2"}, {"--runs", "2", "--cpuprofile", filepath.Join(dir, "p")}} {
		var buf bytes.Buffer
		err := benchRecall(context.Background(), append(bad, "--memories", "10", "--data", t.TempDir()), &buf, &buf)
		if err == nil || !strings.Contains(err.Error(), "--runs") {
			t.Errorf("%v: %v, want refused", bad, err)
		}
	}
}

func TestMedianRun(t *testing.T) {
	runs := []benchRun{{P95: 3, QPS: 10}, {P95: 1, QPS: 30}, {P95: 2, QPS: 20}}
	if m := medianRun(runs); m.P95 != 2 || m.QPS != 20 {
		t.Fatalf("median %+v, want p95 2 and qps 20", m)
	}
	if m := medianRun(runs[:2]); m.P95 != 3 || m.QPS != 30 {
		t.Fatalf("median of two %+v, want the upper values", m)
	}
}

// printedNear reports whether the number pattern's group captures in out is within the
// rounding of two decimals of want.
func printedNear(out, pattern string, want float64) bool {
	m := regexp.MustCompile(pattern).FindStringSubmatch(out)
	if m == nil {
		return false
	}
	v, err := strconv.ParseFloat(m[1], 64)
	return err == nil && math.Abs(v-want) <= 0.0051
}

// TestHostScaling: the host's ceiling is a ratio of loop rates, positive and finite. Its
// size depends on what else the machine runs (two loops against one read ×2.6 on a loaded
// host), so the bounds only catch a ratio that is not one: the figure itself is the bench's.
func TestHostScaling(t *testing.T) {
	for _, n := range []int{1, 2} {
		if r := hostScaling(n, 4); !(r > 0.1 && r < 10) {
			t.Errorf("%d loops against one: ×%.2f, not a ratio of two loop rates", n, r)
		}
	}
}

// TestHostCheck: the host figures are rates in the units they are printed in: a core reads
// its shared cache at some gigabytes a second (a tenth of that under the race detector), not
// bytes or terabytes, and hashes at tens to thousands of megabytes a second.
func TestHostCheck(t *testing.T) {
	h := hostCheck()
	if !(h.ReadGBs > 0.05 && h.ReadGBs < 500) || !(h.SHAMBs > 10 && h.SHAMBs < 20000) {
		t.Fatalf("host check = %+v: not rates of a machine", h)
	}
	if s := h.String(); !strings.Contains(s, "GB/s") || !strings.Contains(s, "MB/s") {
		t.Fatalf("host check reads %q", s)
	}
}
