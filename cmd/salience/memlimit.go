package main

import (
	"bufio"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// memLimitShare is the share of the machine's memory (or the cgroup's limit, when lower) that
// the Go runtime is told it may use when GOMEMLIMIT is not set. GOGC=400 (defaultGCPercent)
// lets the heap grow to five times the live indexes before a collection — about 5 GB at
// 100,000 memories — which is fine while memory is plentiful and an out-of-memory kill when
// it is not; the soft limit makes the collector run earlier only as the heap nears it.
const memLimitShare = 0.75

// defaultMemoryLimit returns the soft memory limit for a machine with memTotal bytes and a
// cgroup limit of cgroupMax bytes (≤ 0: none), or 0 when neither is known.
func defaultMemoryLimit(memTotal, cgroupMax int64) int64 {
	avail := memTotal
	if cgroupMax > 0 && (avail <= 0 || cgroupMax < avail) {
		avail = cgroupMax
	}
	if avail <= 0 {
		return 0
	}
	return int64(float64(avail) * memLimitShare)
}

// setDefaultMemoryLimit applies defaultMemoryLimit unless GOMEMLIMIT is set.
func setDefaultMemoryLimit() {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	if lim := defaultMemoryLimit(memTotal(), cgroupMemoryMax()); lim > 0 {
		debug.SetMemoryLimit(lim)
	}
}

// memTotal returns MemTotal from /proc/meminfo in bytes, or 0 off Linux.
func memTotal() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// cgroupMemoryMax returns the cgroup v2 memory limit in bytes, or 0 when there is none.
func cgroupMemoryMax() int64 {
	b, err := os.ReadFile("/sys/fs/cgroup/memory.max")
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64) // "max" means none
	if err != nil {
		return 0
	}
	return n
}

// residentBytes returns the process's resident set (VmRSS in /proc/self/status), or 0 off
// Linux.
func residentBytes() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
