package recall

import (
	"fmt"
	"strings"
	"time"

	"github.com/salience-ai/salience/ids"
)

func newTurnID(req *Request) string { return ids.New(req.Now) }

// Format renders results as the context block a bot injects into its prompt. It is the one
// formatter: every front end (HTTP, CLI, MCP) calls it, so bots see the same text everywhere.
// No results → "" (never filler).
func Format(results []Result, now time.Time) string {
	if len(results) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Relevant memories:\n")
	for _, r := range results {
		b.WriteString("- [")
		b.WriteString(string(r.Memory.Kind))
		if t := r.Memory.Time(); !t.IsZero() {
			b.WriteString(", ")
			b.WriteString(t.UTC().Format("2006-01-02"))
			b.WriteString(", ")
			b.WriteString(ago(now.Sub(t)))
		}
		if s := r.Memory.Source.Speaker; s != "" {
			b.WriteString(", ")
			b.WriteString(s)
		}
		b.WriteString("] ")
		if f := r.Fragment; f != nil {
			fmt.Fprintf(&b, "[Fragment %d/%d of %s] ", f.Index, f.Count, f.ParentID)
		}
		b.WriteString(strings.Join(strings.Fields(r.Content), " "))
		b.WriteByte('\n')
	}
	return b.String()
}

// ago renders a duration the way a person would say it.
func ago(d time.Duration) string {
	switch {
	case d < 0:
		return "upcoming"
	case d < time.Hour:
		return "just now"
	case d < 24*time.Hour:
		return fmt.Sprintf("%d hours ago", int(d.Hours()))
	case d < 48*time.Hour:
		return "yesterday"
	case d < 14*24*time.Hour:
		return fmt.Sprintf("%d days ago", int(d.Hours()/24))
	case d < 60*24*time.Hour:
		return fmt.Sprintf("%d weeks ago", int(d.Hours()/24/7))
	case d < 730*24*time.Hour:
		return fmt.Sprintf("%d months ago", int(d.Hours()/24/30))
	default:
		return fmt.Sprintf("%d years ago", int(d.Hours()/24/365))
	}
}
