//go:build windows

package main

import (
	"time"

	"golang.org/x/sys/windows"
)

// processCPU returns the CPU time the process has used so far, user and kernel, on every
// thread; 0 where GetProcessTimes fails.
func processCPU() time.Duration {
	var created, exited, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(windows.CurrentProcess(), &created, &exited, &kernel, &user); err != nil {
		return 0
	}
	ticks := func(f windows.Filetime) int64 { return int64(f.HighDateTime)<<32 | int64(f.LowDateTime) } // 100 ns each
	return time.Duration((ticks(kernel) + ticks(user)) * 100)
}
