package app

import (
	"context"
	"errors"
	"flag"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/salience-ai/salience/internal/doccheck"
	"github.com/salience-ai/salience/server"
)

// docFiles are the README and docs/*.md.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := doccheck.Files("../..")
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// parseOnly runs a documented salience command line only as far as its flags: with -h
// appended, a command whose flags all parse stops at the help with flag.ErrHelp, before it
// does anything; an unknown command or flag, or a bad value, fails with its own error.
func parseOnly(args []string) error {
	// Cancelled, so a command that got past its flags (a doc line ending in a flag that
	// took the -h as its value) stops at once instead of running.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m := NewMain()
	m.Stdout, m.Stderr = io.Discard, io.Discard
	m.Getenv = func(string) string { return "" }
	if len(args) > 0 && args[0] == "version" {
		return errors.Join(m.ParseFlags(ctx, args), flag.ErrHelp)
	}
	if err := m.ParseFlags(ctx, append(slices.Clip(args), "-h")); err != nil {
		return err
	}
	defer m.Close()
	return m.Run(ctx)
}

// TestDocumentedCommandsParse: every salience command line in a code block of the README
// and docs parses with the command's real flags.
func TestDocumentedCommandsParse(t *testing.T) {
	cmds, err := doccheck.Commands(docFiles(t))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range cmds {
		if c.Binary != "salience" {
			continue
		}
		n++
		if err := parseOnly(c.Args); !errors.Is(err, flag.ErrHelp) {
			t.Errorf("%s: salience %s: %v", c.Line, strings.Join(c.Args, " "), err)
		}
	}
	t.Logf("%d command lines checked", n)
	if n < 10 {
		t.Fatalf("found %d salience command lines in the docs; the extraction is broken", n)
	}
}

// assignment is a shell line setting a variable, S=http://….
var assignment = regexp.MustCompile(`^\s*[A-Za-z_][A-Za-z0-9_]*=`)

// TestDocumentedRoutes: every /v1/… path the docs name is a route of the server, every
// method-and-path the docs document is one, and every route of the server and of
// server/openapi.yaml is documented.
func TestDocumentedRoutes(t *testing.T) {
	s := startServer(t, "")
	params := strings.NewReplacer(":ns", "{ns}", ":id", "{id}", ":name", "{name}")
	var routes []doccheck.Route
	for _, r := range s.m.api.Routes() {
		routes = append(routes, doccheck.Route{Method: r.Method, Path: params.Replace(r.Path)})
	}
	var doc struct {
		Paths map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(server.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	var openapi []doccheck.Route
	for path, ops := range doc.Paths {
		for method := range ops {
			if method != "parameters" {
				openapi = append(openapi, doccheck.Route{Method: strings.ToUpper(method), Path: path})
			}
		}
	}
	files := docFiles(t)

	refs, err := doccheck.Paths(files)
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) < 50 {
		t.Fatalf("found %d /v1 paths in the docs; the extraction is broken", len(refs))
	}
	// Paths of the APIs Salience calls (an embedder's, a chat endpoint's) are not its own.
	foreign := []string{"/v1/", "/v1/embeddings", "/v1/chat/completions"}
	for _, ref := range refs {
		if slices.Contains(foreign, ref.Path) {
			continue
		}
		// A shell variable may hold a route's first segments (S=…/v1/namespaces/demo).
		prefix := ref.Prefix || ref.Code && assignment.MatchString(ref.Text)
		if !slices.ContainsFunc(routes, func(r doccheck.Route) bool { return doccheck.Matches(r.Path, ref.Path, prefix) }) {
			t.Errorf("%s names %s, which is no route", ref.Line, ref.Path)
		}
	}

	documented, err := doccheck.Documented(files)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range documented {
		if !slices.ContainsFunc(routes, func(r doccheck.Route) bool { return r.Method == d.Method && doccheck.Matches(r.Path, d.Path, false) }) {
			t.Errorf("the docs document %s, which is no route", d)
		}
	}
	for _, r := range append(routes, openapi...) {
		if !slices.ContainsFunc(documented, func(d doccheck.Route) bool { return r.Method == d.Method && doccheck.Matches(r.Path, d.Path, false) }) {
			t.Errorf("route %s is not documented in README.md or docs/ (as %q)", r, r.String())
		}
	}
}
