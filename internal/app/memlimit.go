package app

import (
	"bufio"
	"math"
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

// budgetAllowanceMin is the least memory a server with --index-budget may use beyond the
// budget before its default soft limit makes the collector work harder: requests, recall's
// scratch, SQLite's reads and the garbage of namespace loads and evictions. Above 512 MB of
// budget the allowance is half the budget (the collector's headroom, as GOGC=50 of the
// indexes would give) instead.
const budgetAllowanceMin = 256 << 20

// budgetMemoryLimit returns the default soft memory limit of a server whose indexes are
// held to budget bytes: the budget plus max(256 MiB, budget/2), never above machine (the
// 3/4-of-memory default, defaultMemoryLimit; ≤ 0: unknown). With no budget it is machine:
// every namespace is loaded and nothing bounds the indexes but the machine.
func budgetMemoryLimit(budget, machine int64) int64 {
	if budget <= 0 {
		return machine
	}
	lim := budget + max(budgetAllowanceMin, budget/2)
	if lim < budget { // overflow: a budget near MaxInt64
		lim = math.MaxInt64
	}
	if machine > 0 && lim > machine {
		return machine
	}
	return lim
}

// FollowIndexBudget makes the soft memory limit follow an index budget of budget bytes
// (budgetMemoryLimit) unless GOMEMLIMIT is set or there is no budget. It returns the limit
// it set (0: none) and a function restoring the previous one.
func FollowIndexBudget(budget int64, getenv func(string) string) (int64, func()) {
	if budget <= 0 || getenv("GOMEMLIMIT") != "" {
		return 0, func() {}
	}
	lim := budgetMemoryLimit(budget, defaultMemoryLimit(memTotal(), cgroupMemoryMax()))
	prev := debug.SetMemoryLimit(lim)
	return lim, func() { debug.SetMemoryLimit(prev) }
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

// ResidentBytes returns the process's resident set (VmRSS in /proc/self/status), or 0 off
// Linux.
func ResidentBytes() int64 {
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
