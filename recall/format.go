package recall

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/salience-ai/salience/nlp"
)

// header opens every non-empty context block.
const header = "Relevant memories:\n"

// Format renders results as the context block a bot injects into its prompt. It is the one
// formatter: every front end (HTTP, CLI, MCP) calls it, so bots see the same text everywhere.
// No results → "" (never filler). Each result is exactly one line: every field copied from a
// memory is cleaned (see clean), so no memory can add lines of its own to a bot's prompt.
func Format(results []Result, now time.Time) string {
	if len(results) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(header)
	for _, r := range results {
		writeLine(&b, r, now)
		b.WriteByte('\n')
	}
	return b.String()
}

// writeLine writes one result's line of the block, without its newline:
// "- [kind, date, ago, speaker] [Fragment i/n of parent] content".
func writeLine(b *strings.Builder, r Result, now time.Time) {
	b.WriteString("- [")
	b.WriteString(clean(string(r.Memory.Kind)))
	if t := r.Memory.Time(); !t.IsZero() {
		b.WriteString(", ")
		b.WriteString(t.UTC().Format("2006-01-02"))
		b.WriteString(", ")
		b.WriteString(ago(now.Sub(t)))
	}
	if s := cleanSpeaker(r.Memory.Source.Speaker); s != "" {
		b.WriteString(", ")
		b.WriteString(s)
	}
	b.WriteString("] ")
	if f := r.Fragment; f != nil {
		fmt.Fprintf(b, "[Fragment %d/%d of %s] ", f.Index, f.Count, clean(f.ParentID))
	}
	b.WriteString(clean(r.Content))
}

// clean makes a field safe to copy into the block: every run of white space and control
// characters — newlines, NUL, ESC, DEL, the C1 controls, line and paragraph separators —
// becomes one space, the ends are trimmed, bidi controls are dropped (bidiControl), and
// invalid UTF-8 becomes U+FFFD. For ordinary text it is strings.Join(strings.Fields(s), " "),
// what the block always did to content.
func clean(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	gap := false
	for _, r := range s { // an invalid byte comes out as utf8.RuneError, U+FFFD
		if bidiControl(r) {
			continue
		}
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			gap = b.Len() > 0
			continue
		}
		if gap {
			b.WriteByte(' ')
			gap = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// bidiControl reports the explicit bidi formatting characters: the embeddings and overrides
// U+202A–U+202E, the isolates U+2066–U+2069, and the marks U+200E, U+200F and U+061C. An
// override such as U+202E left open in one memory reverses how a log or a UI shows the rest
// of the prompt after it ("Trojan Source"). They are removed, not shown as a placeholder: the
// model reads the logical order, where they mean nothing, so removing them changes no word,
// while a placeholder would cost tokens on every line of genuine right-to-left text that uses
// the marks. The stored content keeps them.
func bidiControl(r rune) bool {
	return r >= '\u202a' && r <= '\u202e' || r >= '\u2066' && r <= '\u2069' || r == '\u200e' || r == '\u200f' || r == '\u061c'
}

// cleanSpeaker is clean, and the speaker sits inside the line's bracketed header, so its
// own brackets become parentheses: a speaker cannot close the header and write a fake one.
func cleanSpeaker(s string) string {
	return strings.NewReplacer("[", "(", "]", ")").Replace(clean(s))
}

// lineTokens is what one result costs in the block, its whole line with the "- [kind, …]"
// prefix and the newline, estimated as nlp.EstimateTokens does. Summing it over the lines
// (plus the header's) never estimates a block below what nlp.EstimateTokens of the whole
// block gives, so a block packed under a token budget stays under it.
func lineTokens(r Result, now time.Time) int {
	var b strings.Builder
	writeLine(&b, r, now)
	b.WriteByte('\n')
	return nlp.EstimateTokens(b.String())
}

// tokenBudget packs results into a token budget counted on the formatted block.
type tokenBudget struct {
	max, used int // max 0: no budget
	now       time.Time
}

func newTokenBudget(max int, now time.Time) *tokenBudget {
	return &tokenBudget{max: max, now: now}
}

// take reports whether r's line fits in what is left, and if so counts it (and, with the
// first line, the header).
func (b *tokenBudget) take(r Result) bool {
	if b.max <= 0 {
		return true
	}
	t := lineTokens(r, b.now)
	if b.used == 0 {
		t += nlp.EstimateTokens(header)
	}
	if b.used+t > b.max {
		return false
	}
	b.used += t
	return true
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
