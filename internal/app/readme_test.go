package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// walkthrough returns the README's five-minute walkthrough: the section's prose and its
// first sh block, as a user would paste it.
func walkthrough(t *testing.T) (prose, script string) {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## Five-minute walkthrough\n")
	if !ok {
		t.Fatal(`README.md has no "## Five-minute walkthrough" section`)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	before, rest, ok := strings.Cut(sec, "\n```sh\n")
	if !ok {
		t.Fatal("the walkthrough has no ```sh block")
	}
	script, after, ok := strings.Cut(rest, "\n```\n")
	if !ok {
		t.Fatal("the walkthrough's sh block is not closed")
	}
	return before + after, script
}

// TestREADMEWalkthrough pastes the README's walkthrough into bash against the real binary,
// as a user does against `make run`, and checks what the README says it shows: the plain
// recall finds the memory, the report is applied, and the reported use moves the memory's
// confidence from 0.5 to 0.6 and its use count from 0 to 1.
func TestREADMEWalkthrough(t *testing.T) {
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the walkthrough needs %s: %v", tool, err)
		}
	}
	prose, script := walkthrough(t)
	for _, claim := range []string{"confidence rose from 0.5 to 0.6 and it counts one use", `"confidence":0.6`, `"usage_count":1`} {
		if !strings.Contains(script+prose, claim) {
			t.Fatalf("the walkthrough no longer says %q; change this test with it", claim)
		}
	}
	p := startBinary(t, binary(t), t.TempDir())
	cmd := exec.Command("bash", "-e", "-o", "pipefail", "-c", script)
	cmd.Env = append(os.Environ(), "SALIENCE_URL="+p.base)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the walkthrough failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}

	// Its output: the stored memories, the ambient answer, the search answer, the report and
	// the memory read back, one JSON document each.
	type memory struct {
		ID         string  `json:"id"`
		Content    string  `json:"content"`
		Confidence float64 `json:"confidence"`
		UsageCount int     `json:"usage_count"`
	}
	var (
		stored   struct{ Memories []memory }
		ambient  struct{ Results []memory }
		search   struct{ Results []memory }
		reported struct{ Applied, Rejected int }
		after    memory
	)
	dec := json.NewDecoder(&stdout)
	for i, v := range []any{&stored, &ambient, &search, &reported, &after} {
		if err := dec.Decode(v); err != nil {
			t.Fatalf("output document %d: %v\nall output:\n%s", i+1, err, stdout.String())
		}
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		t.Errorf("more output than the five documents the README describes: %s (%v)", extra, err)
	}

	if len(stored.Memories) != 3 {
		t.Fatalf("stored %d memories, want the walkthrough's 3", len(stored.Memories))
	}
	if len(search.Results) == 0 || !strings.Contains(search.Results[0].Content, "bees") {
		t.Fatalf("the plain recall shows %+v, want the bees memory first", search.Results)
	}
	if reported.Applied != 1 || reported.Rejected != 0 {
		t.Errorf("the report: applied %d, rejected %d; want 1 applied", reported.Applied, reported.Rejected)
	}
	var before *memory
	for i := range stored.Memories {
		if stored.Memories[i].ID == search.Results[0].ID {
			before = &stored.Memories[i]
		}
	}
	if before == nil || after.ID != before.ID {
		t.Fatalf("read back %q, want the reported memory %q", after.ID, search.Results[0].ID)
	}
	if math.Abs(before.Confidence-0.5) > 1e-9 || before.UsageCount != 0 {
		t.Errorf("before the report: confidence %v, uses %d; want 0.5 and 0", before.Confidence, before.UsageCount)
	}
	if math.Abs(after.Confidence-0.6) > 1e-9 || after.UsageCount != 1 {
		t.Errorf("after the used report: confidence %v, uses %d; want 0.6 and 1, as the README says", after.Confidence, after.UsageCount)
	}
}
