package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSoakShort runs the soak command briefly against a server in this process: every route
// gets traffic, nothing fails, and the report has its lines.
func TestSoakShort(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a server under load for 2 s; skipped with -short")
	}
	var out bytes.Buffer
	prof := filepath.Join(t.TempDir(), "heap")
	err := runSoak(context.Background(), []string{"--in-process", "--duration", "2s", "--warmup", "500ms", "--clients", "2",
		"--preload", "100", "--window", "10", "--max-wal-mb", "10000", "--max-rss-growth", "100", "--heapprofile", prof}, &out, io.Discard)
	if err != nil {
		t.Fatalf("soak: %v\n%s", err, out.String())
	}
	report := out.String()
	for _, route := range soakRoutes {
		m := regexp.MustCompile(`(?m)^` + route + `\s+(\d+)\s+(\d+)\s+(\d+)\s`).FindStringSubmatch(report)
		if m == nil {
			t.Errorf("no %s row in the report:\n%s", route, report)
			continue
		}
		if n, _ := strconv.Atoi(m[1]); n == 0 {
			t.Errorf("%s: no requests", route)
		}
		if m[2] != "0" || m[3] != "0" {
			t.Errorf("%s: %s errors, %s 5xx:\n%s", route, m[2], m[3], report)
		}
	}
	for _, want := range []string{"rss: start ", "wal: start ", "soak: ok"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	// Heap profiles at the third and at the end: gzipped protocol buffers.
	for _, suffix := range []string{".third", ".end"} {
		b, err := os.ReadFile(prof + suffix)
		if err != nil || len(b) < 100 || b[0] != 0x1f || b[1] != 0x8b {
			t.Errorf("heap profile %s: %d bytes, %v; want a gzipped profile", suffix, len(b), err)
		}
	}
	// The corpus stays at its steady size: the preload and each client's window, plus at
	// most two memories per client that the end of the run caught: one whose delete it
	// cancelled, one whose answer it cancelled after the server had stored it.
	m := regexp.MustCompile(`GET memories 200, (\d+) memories`).FindStringSubmatch(report)
	if m == nil {
		t.Fatalf("no store line in the report:\n%s", report)
	}
	if n, _ := strconv.Atoi(m[1]); n < 120 || n > 124 {
		t.Errorf("%d memories after the run, want 120 (+ at most two per client)", n)
	}
}

// TestSoakCheck: the verdict's rules, on known values.
func TestSoakCheck(t *testing.T) {
	o := &soakOptions{maxWALMB: 64, maxGrowth: 1.10}
	healthy := func() *soakReport {
		return &soakReport{routes: map[string]*routeStats{"recall": {n: 10}}, rssThird: 100, rssEnd: 110, walMax: 64, finalStatus: 200}
	}
	if got := healthy().check(o); len(got) != 0 {
		t.Errorf("at the limits: %v, want no failure", got)
	}
	for _, tc := range []struct {
		name   string
		break_ func(r *soakReport)
		want   string
	}{
		{"a 5xx", func(r *soakReport) { r.routes["recall"].server = 1 }, "1 responses were 5xx"},
		{"WAL over", func(r *soakReport) { r.walMax = 64.1 }, "the WAL reached 64.1 MB, over 64 MB"},
		{"RSS growth", func(r *soakReport) { r.rssEnd = 110.2 }, "RSS grew from 100.0 MB after the first third to 110.2 MB, over ×1.10"},
		{"RSS unknown", func(r *soakReport) { r.rssThird = 0 }, "RSS could not be read"},
		{"store gone", func(r *soakReport) { r.finalStatus = 503 }, "listing memories after the run answered 503"},
	} {
		r := healthy()
		tc.break_(r)
		got := strings.Join(r.check(o), "; ")
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: check = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestSoakFlags: bad settings are refused before anything starts.
func TestSoakFlags(t *testing.T) {
	for _, args := range [][]string{{"--clients", "0"}, {"--duration", "0s"}, {"--warmup", "-1s"}, {"--max-rss-growth", "0.5"}, {"extra"}, {"--heapprofile", "h"}} {
		start := time.Now()
		if err := runSoak(context.Background(), args, io.Discard, io.Discard); err == nil {
			t.Errorf("soak %q: no error", args)
		}
		if time.Since(start) > 5*time.Second {
			t.Errorf("soak %q: took %v to refuse", args, time.Since(start))
		}
	}
}

// TestSoakClipLine: an error quoted in the report is one line, cut at a rune boundary.
func TestSoakClipLine(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"a\nb", 10, "a b"},
		{"ab日本", 4, "ab…"}, // byte 4 is inside 日: the cut moves back to its start
		{"x\n日本", 5, "x 日…"},
	} {
		if got := clipLine(tc.in, tc.n); got != tc.want {
			t.Errorf("clipLine(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
