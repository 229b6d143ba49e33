// Package arch checks the layering the Architecture table of docs/design.md states: imports point down
// the table, so a package never imports one listed above it. docs/design.md is the one statement
// of the rule; this test reads it, so the table and the code cannot drift apart.
package arch

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

const module = "github.com/salience-ai/salience/"

// tableRow matches a row of the Architecture table: | `pkg` | what it holds |
var tableRow = regexp.MustCompile("^\\| `([a-z0-9/_-]+)` \\|")

// layers returns the packages of the Architecture table of docs/design.md, top first.
func layers(t *testing.T, readme string) []string {
	t.Helper()
	f, err := os.Open(readme)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			in = line == "## Architecture"
		case in && strings.HasPrefix(line, "### "):
			in = false
		case in:
			if m := tableRow.FindStringSubmatch(line); m != nil {
				out = append(out, m[1])
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no package table under \"## Architecture\"", readme)
	}
	return out
}

type pkg struct {
	ImportPath string
	Imports    []string
}

// packages lists the module's packages and their non-test imports inside the module.
func packages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = ".."
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		p.ImportPath = strings.TrimPrefix(p.ImportPath, module)
		var own []string
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, module) {
				own = append(own, strings.TrimPrefix(imp, module))
			}
		}
		p.Imports = own
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// violations returns, for the given layers and packages, every import that points up or
// sideways, and every package the table does not list.
func violations(order []string, pkgs []pkg) []string {
	rank := make(map[string]int, len(order))
	for i, p := range order {
		rank[p] = i
	}
	var bad []string
	for _, p := range pkgs {
		if p.ImportPath == "arch" {
			continue
		}
		r, ok := rank[p.ImportPath]
		if !ok {
			bad = append(bad, fmt.Sprintf("package %s is not in the Architecture table of docs/design.md", p.ImportPath))
			continue
		}
		for _, imp := range p.Imports {
			ri, ok := rank[imp]
			switch {
			case !ok:
				bad = append(bad, fmt.Sprintf("%s imports %s, which the Architecture table of docs/design.md does not list", p.ImportPath, imp))
			case ri <= r:
				bad = append(bad, fmt.Sprintf("%s imports %s, which the Architecture table of docs/design.md lists above it", p.ImportPath, imp))
			}
		}
	}
	return bad
}

func TestImportsPointDownTheTable(t *testing.T) {
	order := layers(t, "../docs/design.md")
	for _, v := range violations(order, packages(t)) {
		t.Error(v)
	}
}

// TestViolationsCatchesAnUpwardImport shows the check can fail: an import up the table and a
// package missing from it are both reported.
func TestViolationsCatchesAnUpwardImport(t *testing.T) {
	order := []string{"server", "recall", "models"}
	pkgs := []pkg{
		{ImportPath: "server", Imports: []string{"recall", "models"}},
		{ImportPath: "recall", Imports: []string{"models"}},
		{ImportPath: "models", Imports: []string{"recall"}}, // up
		{ImportPath: "extra"}, // unlisted
	}
	got := violations(order, pkgs)
	want := []string{
		"models imports recall, which the Architecture table of docs/design.md lists above it",
		"package extra is not in the Architecture table of docs/design.md",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
