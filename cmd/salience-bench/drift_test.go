package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/salience-ai/salience/internal/doccheck"
)

// TestDocumentedCommandsParse: every salience-bench command line in a code block of the
// README and docs parses with the tool's real flags. With -h appended, a command whose flags
// all parse stops at the help (flag.ErrHelp) before it does anything; an unknown tool or
// flag, or a bad value, fails with its own error.
func TestDocumentedCommandsParse(t *testing.T) {
	files, err := doccheck.Files("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmds, err := doccheck.Commands(files)
	if err != nil {
		t.Fatal(err)
	}
	// Cancelled, so a command that got past its flags (a doc line ending in a flag that took
	// the -h as its value) stops at once instead of running.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n := 0
	for _, c := range cmds {
		if c.Binary != "salience-bench" {
			continue
		}
		n++
		args := append(slices.Clip(c.Args), "-h")
		if err := run(ctx, args, func(string) string { return "" }, io.Discard, io.Discard); !errors.Is(err, flag.ErrHelp) {
			t.Errorf("%s: salience-bench %s: %v", c.Line, strings.Join(c.Args, " "), err)
		}
	}
	t.Logf("%d command lines checked", n)
	if n < 5 {
		t.Fatalf("found %d salience-bench command lines in the docs; the extraction is broken", n)
	}
}
