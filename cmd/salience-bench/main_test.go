package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// runMain runs the binary's command line with an empty environment and returns its output.
func runMain(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := run(context.Background(), args, func(string) string { return "" }, &out, &out)
	return out.String(), err
}

// TestBenchRecallTakesServesEmbedder: bench recall embeds with serve's flags, and refuses a
// kept corpus that another embedder made rather than compare its vectors with other ones.
func TestBenchRecallTakesServesEmbedder(t *testing.T) {
	dir := t.TempDir()
	args := []string{"recall", "--memories", "50", "--queries", "5", "--data", dir, "--embedder", "local"}
	if out, err := runMain(t, append(args, "--embed-dims", "64")...); err != nil {
		t.Fatalf("bench recall: %v\n%s", err, out)
	}
	_, err := runMain(t, args...)
	want := `namespace "bench" holds vectors of local-hash-v1-64 (64 dimensions) but the configured embedder is local-hash-v1-256 (256 dimensions)`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("bench recall over another embedder's corpus: %v, want %q", err, want)
	}
}

// TestEvalLocomoDirectory: the LoCoMo directory is --locomo, else SALIENCE_LOCOMO — not the
// server's SALIENCE_DATA — and with neither (and no dev split beside the checkout) the
// command says how to give it.
func TestEvalLocomoDirectory(t *testing.T) {
	dir := tinyLoCoMoDir(t)
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string // in the error; "" for success
	}{
		{[]string{"eval", "locomo", "--locomo", dir, "--embedder", "local"}, nil, ""},
		{[]string{"eval", "locomo", "--embedder", "local"}, map[string]string{"SALIENCE_LOCOMO": dir}, ""},
		{[]string{"eval", "locomo", "--embedder", "local"}, map[string]string{"SALIENCE_DATA": dir}, "give --locomo DIR (or SALIENCE_LOCOMO)"},
		{[]string{"eval", "locomo", "--data", dir}, nil, "flag provided but not defined: -data"},
	} {
		var out bytes.Buffer
		err := run(context.Background(), c.args, env(c.env), &out, &out)
		switch {
		case c.want == "" && (err != nil || !strings.Contains(out.String(), "LoCoMo evidence recall, 1 conversations from "+dir)):
			t.Errorf("%q with %v: %v\n%s", c.args, c.env, err, out.String())
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q with %v: %v, want an error saying %q", c.args, c.env, err, c.want)
		}
	}
}
