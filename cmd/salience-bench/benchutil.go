package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"sync"
	"sync/atomic"
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

// scalingResult is what measureScaling reports.
type scalingResult struct {
	qps1, qpsN float64 // calls ÷ wall time over every round, at concurrency 1 and at n
	ratio      float64 // qpsN ÷ qps1
	lo, median float64 // the rounds' own ratios: least and median (nearest rank)
	hi         float64 // and greatest
	// The process's CPU time a call (ms) in the blocks at concurrency 1 and at n, and the
	// cores it kept busy there (CPU time ÷ wall time). ratio = busyN ÷ (cpuN · qps1): two
	// callers add calls only as far as the cores they keep busy outgrow the CPU a call.
	cpu1, cpuN   float64
	busy1, busyN float64
}

// bound is the ratio the calls would reach at concurrency n if they kept every one of cores
// busy at the CPU a call they took there: cores ÷ (cpuN · qps1). The measured ratio is bound
// times the share of those cores they did keep busy, busyN ÷ cores.
func (r scalingResult) bound(cores int) float64 {
	if r.cpuN <= 0 || r.qps1 <= 0 {
		return 0
	}
	return float64(cores) / (r.cpuN / 1000 * r.qps1)
}

// measureScaling measures how throughput scales from one caller to n: rounds rounds, each a
// block of calls calls at concurrency 1 and a block at n, the order alternating by round so
// that neither always follows the other. Two separate runs meet a shared machine at
// different moments, and its speed drifts by tens of percent from one minute to the next;
// blocks a second apart meet it nearly alike, so their ratio is the software's. call(i)
// makes call i, for i from 0 to 2·rounds·calls − 1, each once; cpu reads the process's CPU
// time so far (processCPU), read around each block.
func measureScaling(n, rounds, calls int, cpu func() time.Duration, call func(i int) error) (scalingResult, error) {
	next := 0
	block := func(conc int) (time.Duration, time.Duration, error) {
		base := next
		next += calls
		c := cpu()
		t := time.Now()
		err := benchParallel(conc, calls, func(i int) error { return call(base + i) })
		return time.Since(t), cpu() - c, err
	}
	var wall1, wallN, cpu1, cpuN time.Duration
	ratios := make([]float64, rounds)
	for r := range rounds {
		order := []int{1, n}
		if r%2 == 1 {
			order = []int{n, 1}
		}
		var took, used [2]time.Duration
		for k, conc := range order {
			d, c, err := block(conc)
			if err != nil {
				return scalingResult{}, err
			}
			took[k], used[k] = d, c
		}
		d1, dn, c1, cn := took[0], took[1], used[0], used[1]
		if r%2 == 1 {
			d1, dn, c1, cn = dn, d1, cn, c1
		}
		wall1, wallN, cpu1, cpuN = wall1+d1, wallN+dn, cpu1+c1, cpuN+cn
		ratios[r] = d1.Seconds() / dn.Seconds() // as many calls each: qps_n ÷ qps_1
	}
	total := float64(rounds * calls)
	res := scalingResult{
		qps1:  total / wall1.Seconds(),
		qpsN:  total / wallN.Seconds(),
		cpu1:  float64(cpu1) / float64(time.Millisecond) / total,
		cpuN:  float64(cpuN) / float64(time.Millisecond) / total,
		busy1: cpu1.Seconds() / wall1.Seconds(),
		busyN: cpuN.Seconds() / wallN.Seconds(),
	}
	res.ratio = res.qpsN / res.qps1
	slices.Sort(ratios)
	res.lo, res.hi = ratios[0], ratios[len(ratios)-1]
	res.median = stat.Quantile(0.5, stat.Empirical, ratios, nil)
	return res, nil
}

// hostScaling measures the ceiling the machine itself puts on measureScaling's ratio: how
// the throughput of n goroutines hashing their own buffers (arithmetic in each core's own
// caches, sharing nothing) compares with one's, over rounds rounds alternating the order as
// measureScaling does. Two virtual cores are not always two whole cores: a hypervisor may
// place them on the two threads of one, or neighbours may take their share, and a ratio a
// program cannot beat reads the software's ratio in its light.
func hostScaling(n, rounds int) float64 {
	work := func() {
		block := make([]byte, 1<<20)
		for range 8 {
			s := sha256.Sum256(block)
			block[0] = s[0]
		}
		scalingSink.Add(uint64(block[0])) // the loops run at once: an atomic add, not hostSink's
	}
	block := func(conc int) time.Duration {
		var wg sync.WaitGroup
		t := time.Now()
		for range conc {
			wg.Go(work)
		}
		wg.Wait()
		return time.Since(t)
	}
	block(n) // warm-up
	var wall1, wallN time.Duration
	for r := range rounds {
		if r%2 == 0 {
			wall1 += block(1)
			wallN += block(n)
		} else {
			wallN += block(n)
			wall1 += block(1)
		}
	}
	return float64(n) * wall1.Seconds() / wallN.Seconds()
}

// hostState is what one core of this machine gave at one moment: read bandwidth from a
// buffer the size of the 100k benchmark's vector scan (6.4 MB: beyond the core's own caches,
// within the shared last-level cache of a server part) and SHA-256 throughput (arithmetic,
// within the core's caches). On a shared machine neighbours take shared cache and memory
// bandwidth, and the same binary's recall then costs more CPU: these figures let a reader
// tell a slow host from a slow change.
type hostState struct {
	ReadGBs float64 `json:"read_gb_s"`
	SHAMBs  float64 `json:"sha256_mb_s"`
}

func (h hostState) String() string {
	return fmt.Sprintf("one core reads 6.4 MB at %.1f GB/s, hashes at %.0f MB/s", h.ReadGBs, h.SHAMBs)
}

// hostSink keeps hostCheck's sums alive, and scalingSink hostScaling's.
var (
	hostSink    uint64
	scalingSink atomic.Uint64
)

// hostCheck measures hostState: the median of 15 timed passes of each, after a warm-up.
func hostCheck() hostState {
	buf := make([]uint64, 6_400_000/8)
	for i := range buf {
		buf[i] = uint64(i) * 0x9e3779b97f4a7c15
	}
	read := func() {
		var a, b, c, d uint64
		for i := 0; i+3 < len(buf); i += 4 {
			a += buf[i]
			b ^= buf[i+1]
			c += buf[i+2]
			d ^= buf[i+3]
		}
		hostSink += a + b + c + d
	}
	block := make([]byte, 1<<20)
	hash := func() {
		s := sha256.Sum256(block)
		hostSink += uint64(s[0])
	}
	median := func(f func()) float64 {
		f()
		ts := make([]float64, 15)
		for i := range ts {
			t := time.Now()
			f()
			ts[i] = time.Since(t).Seconds()
		}
		slices.Sort(ts)
		return ts[len(ts)/2]
	}
	return hostState{ReadGBs: 6.4e-3 / median(read), SHAMBs: 1.048576 / median(hash)}
}
