//go:build !unix && !windows

package main

import "time"

// processCPU is not measured here: 0, as where getrusage fails.
func processCPU() time.Duration { return 0 }
