package doccheck

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// root is the repository, from this package's directory.
const root = "../.."

func TestSlug(t *testing.T) {
	for title, want := range map[string]string{
		"Thresholds (the bandit)":        "thresholds-the-bandit",
		"FSRS-6":                         "fsrs-6",
		"Peers' latency":                 "peers-latency",
		"Five-minute walkthrough":        "five-minute-walkthrough",
		"The record, measure by measure": "the-record-measure-by-measure",
		"`salience metrics`":             "salience-metrics",
	} {
		if got := Slug(title); got != want {
			t.Errorf("Slug(%q) = %q, want %q", title, got, want)
		}
	}
}

func TestShellWords(t *testing.T) {
	for line, want := range map[string][]string{
		`salience mcp --ns a   # a comment`:               {"salience", "mcp", "--ns", "a"},
		`FOO=1 bin/salience serve --addr ":7700"`:         {"FOO=1", "bin/salience", "serve", "--addr", ":7700"},
		`R=$(curl -s x) && salience metrics --ns 'my ns'`: {"R=$(curl", "-s", "x)", "&&", "salience", "metrics", "--ns", "my ns"},
		`a|b; c`:         {"a", "|", "b", ";", "c"},
		`echo "a#b" x#y`: {"echo", "a#b", "x#y"},
	} {
		if got, ok := shellWords(line); !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("shellWords(%q) = %q, %v; want %q", line, got, ok, want)
		}
	}
	if _, ok := shellWords(`-d '{"a":`); ok {
		t.Error("an unclosed quote should not split")
	}
}

func TestMatches(t *testing.T) {
	for _, c := range []struct {
		pattern, path string
		prefix, want  bool
	}{
		{"/v1/namespaces/{ns}/memories/{id}", "/v1/namespaces/demo/memories/01M8", false, true},
		{"/v1/namespaces/{ns}/memories/{id}", "/v1/namespaces/{ns}/memories/{id}", false, true},
		{"/v1/namespaces/{ns}/memories", "/v1/namespaces/demo/memories/01M8", false, false},
		{"/v1/namespaces/{ns}/recall", "/v1/namespaces/demo/recal", false, false},
		{"/v1/admin/jobs/{name}/runs", "/v1/admin/jobs", true, true},
		{"/v1/admin/namespaces", "/v1/admin/jobs", true, false},
		{"/v1/namespaces/{ns}/settings", "/v1/namespaces/{ns}/{x}", false, false},
	} {
		if got := Matches(c.pattern, c.path, c.prefix); got != c.want {
			t.Errorf("Matches(%q, %q, %v) = %v, want %v", c.pattern, c.path, c.prefix, got, c.want)
		}
	}
}

// TestMarkdownLinesFit: no line of the README or docs is over MaxLineRunes outside code
// blocks (a 9,000-character table cell is unreadable in a diff and in an editor).
func TestMarkdownLinesFit(t *testing.T) {
	files, err := Files(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		lines, err := Lines(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			if n := utf8.RuneCountInString(l.Text); !l.Code && n > MaxLineRunes {
				t.Errorf("%s: %d characters, at most %d outside code blocks", l, n, MaxLineRunes)
			}
		}
	}
}

// sourceFiles are the repository's files that may cite the docs: code, SQL, scripts, the
// OpenAPI document, build files and the Markdown itself.
func sourceFiles(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch rel, _ := filepath.Rel(root, path); rel {
			case ".git", "bin", "data":
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".md", ".yaml", ".yml", ".sql", ".toml", ".sh", ".py":
			out = append(out, path)
		default:
			if name := filepath.Base(path); name == "Makefile" || name == "run" {
				out = append(out, path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCitedSectionsExist: every docs/NAME.md#section a comment or document cites, and every
// Markdown link to a section, names a heading that exists.
func TestCitedSectionsExist(t *testing.T) {
	files := sourceFiles(t)
	cites, err := Citations(root, files)
	if err != nil {
		t.Fatal(err)
	}
	md, err := Files(root)
	if err != nil {
		t.Fatal(err)
	}
	links, err := Links(root, md)
	if err != nil {
		t.Fatal(err)
	}
	if len(cites) < 50 || len(links) < 20 {
		t.Fatalf("found %d citations and %d section links; the extraction is broken", len(cites), len(links))
	}
	anchors := map[string]map[string]bool{}
	for _, c := range append(cites, links...) {
		a, ok := anchors[c.File]
		if !ok {
			if a, err = Anchors(filepath.Join(root, c.File)); err != nil {
				a = nil // reported below, once per citation
			}
			anchors[c.File] = a
		}
		switch {
		case a == nil:
			t.Errorf("%s cites %s#%s: no such file", c.From, c.File, c.Anchor)
		case !a[c.Anchor]:
			t.Errorf("%s cites %s#%s: no such section", c.From, c.File, c.Anchor)
		}
	}
}

// TestLinkedFilesExist: every file the README and docs link to (pages, code, images) is in
// the repository, at the path relative to the page that links it.
func TestLinkedFilesExist(t *testing.T) {
	md, err := Files(root)
	if err != nil {
		t.Fatal(err)
	}
	links, err := FileLinks(root, md)
	if err != nil {
		t.Fatal(err)
	}
	if len(links) < 20 {
		t.Fatalf("found %d file links; the extraction is broken", len(links))
	}
	for _, l := range links {
		if _, err := os.Stat(filepath.Join(root, l.File)); err != nil {
			t.Errorf("%s links %s, which is not in the repository", l.From, l.File)
		}
	}
}

// outside are the files a clone lacks; the lines that may still name them: the CI script's
// and the Makefile's call of the shared smoke test, and the LoCoMo dev split's default.
var (
	outside = []string{"DESIGN.md", "REFERENCE.md", "../shared", `"..", "shared"`}
	mayName = map[string]bool{
		"Makefile":                   true, // make smoke
		".ci/run":                    true, // the smoke test in CI
		"cmd/salience-bench/eval.go": true, // eval locomo's default --locomo
	}
)

// TestNothingCitesFilesOutsideTheRepository: code and docs cite docs/…, which a clone has,
// not the design notes the project was started from.
func TestNothingCitesFilesOutsideTheRepository(t *testing.T) {
	for _, f := range sourceFiles(t) {
		rel, _ := filepath.Rel(root, f)
		rel = filepath.ToSlash(rel)
		if mayName[rel] || rel == "internal/doccheck/doccheck_test.go" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, o := range outside {
				if strings.Contains(line, o) || strings.Contains(line, strings.TrimSuffix(o, ".md")+" §") {
					t.Errorf("%s:%d names %s, which a clone lacks: %s", rel, i+1, o, strings.TrimSpace(line))
				}
			}
		}
	}
}
