// Package doccheck reads the repository's Markdown the way the drift tests need it: the
// command lines of its fenced code blocks, the API paths it names, the routes it documents
// and the section anchors everything cites. It imports only the standard library, so any
// package's tests can use it; the tests that hold the docs to the code live beside the code
// (internal/app for salience and the routes, cmd/salience-bench for its commands) and here.
package doccheck

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// MaxLineRunes is the longest line a Markdown file may have outside code blocks.
const MaxLineRunes = 400

// Files returns the user-facing Markdown of the repository at root: README.md and docs/*.md.
func Files(root string) ([]string, error) {
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	return append([]string{filepath.Join(root, "README.md")}, docs...), nil
}

// Line is one line of a Markdown file.
type Line struct {
	File   string
	Number int
	Text   string
	Code   bool // inside a fenced code block
}

func (l Line) String() string { return fmt.Sprintf("%s:%d", l.File, l.Number) }

// Lines reads a Markdown file, marking the lines of fenced code blocks (the fences
// themselves count as code).
func Lines(path string) ([]Line, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Line
	code := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for n := 1; sc.Scan(); n++ {
		t := sc.Text()
		fence := strings.HasPrefix(strings.TrimSpace(t), "```")
		out = append(out, Line{File: path, Number: n, Text: t, Code: code || fence})
		if fence {
			code = !code
		}
	}
	return out, sc.Err()
}

// Command is a command line of a fenced code block that runs one of the binaries.
type Command struct {
	Line
	Binary string   // salience or salience-bench
	Args   []string // what follows the binary, shell-split
}

// binaries are the programs whose command lines Commands collects; a path ending in one
// (bin/salience, ./bin/salience-bench) counts too.
var binaries = []string{"salience", "salience-bench"}

// Commands returns the command lines of the fenced code blocks of the files that run
// salience or salience-bench: a "$ " prompt is dropped, backslash continuations joined,
// comments cut, and each command of a pipeline or list (|, &&, ;) looked at on its own.
func Commands(files []string) ([]Command, error) {
	var out []Command
	for _, path := range files {
		lines, err := Lines(path)
		if err != nil {
			return nil, err
		}
		for i := 0; i < len(lines); i++ {
			l := lines[i]
			if !l.Code || strings.HasPrefix(strings.TrimSpace(l.Text), "```") {
				continue
			}
			text := strings.TrimPrefix(strings.TrimSpace(l.Text), "$ ")
			for strings.HasSuffix(text, `\`) && i+1 < len(lines) && lines[i+1].Code {
				i++
				text = strings.TrimSuffix(text, `\`) + " " + strings.TrimSpace(lines[i].Text)
			}
			words, ok := shellWords(text)
			if !ok {
				continue // unbalanced quotes: a fragment of a multi-line string, not a command
			}
			for _, cmd := range splitCommands(words) {
				// Leading VAR=value assignments belong to the environment.
				for len(cmd) > 0 && strings.Contains(cmd[0], "=") && !strings.HasPrefix(cmd[0], "-") {
					cmd = cmd[1:]
				}
				if len(cmd) == 0 {
					continue
				}
				if bin := binaryOf(cmd[0]); bin != "" {
					out = append(out, Command{Line: l, Binary: bin, Args: cmd[1:]})
				}
			}
		}
	}
	return out, nil
}

func binaryOf(word string) string {
	base := word[strings.LastIndexByte(word, '/')+1:]
	if slices.Contains(binaries, base) {
		return base
	}
	return ""
}

// shellWords splits a line as a POSIX shell would, for the simple lines docs hold: single
// and double quotes, backslash escapes, and a comment from an unquoted # that starts a word.
// Operators (|, ||, &&, ;) become words of their own. ok is false on an unclosed quote.
func shellWords(s string) (words []string, ok bool) {
	var (
		cur     strings.Builder
		inWord  bool
		quote   rune
		escaped bool
	)
	flush := func() {
		if inWord {
			words = append(words, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case quote != 0:
			if r == quote {
				quote = 0
			} else if r == '\\' && quote == '"' {
				escaped = true
			} else {
				cur.WriteRune(r)
			}
		case r == '\\':
			escaped, inWord = true, true
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == '#' && !inWord:
			flush()
			return words, true
		case unicode.IsSpace(r):
			flush()
		case r == '|' || r == ';' || r == '&':
			flush()
			op := string(r)
			if i+1 < len(rs) && (rs[i+1] == '|' || rs[i+1] == '&') {
				op += string(rs[i+1])
				i++
			}
			words = append(words, op)
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, false
	}
	flush()
	return words, true
}

// splitCommands cuts words at the shell's operators.
func splitCommands(words []string) [][]string {
	var out [][]string
	var cur []string
	for _, w := range words {
		switch w {
		case "|", "||", "&&", ";", "&":
			out = append(out, cur)
			cur = nil
		default:
			cur = append(cur, w)
		}
	}
	return append(out, cur)
}

// PathRef is an API path a document names.
type PathRef struct {
	Line
	Path   string // /v1/namespaces/demo/recall, without query string
	Prefix bool   // written with a trailing … : any route under it
}

// pathRE finds /v1/ paths: up to a query string, a quote, a space or a closing bracket.
var pathRE = regexp.MustCompile(`/v1/[A-Za-z0-9_.\-/{}<>:$…]*`)

// Paths returns every /v1/… path the files name, in prose and code alike.
func Paths(files []string) ([]PathRef, error) {
	var out []PathRef
	for _, path := range files {
		lines, err := Lines(path)
		if err != nil {
			return nil, err
		}
		for _, l := range lines {
			for _, m := range pathRE.FindAllString(l.Text, -1) {
				p := strings.TrimRight(m, ".,:")
				ref := PathRef{Line: l, Path: p}
				if strings.HasSuffix(p, "…") {
					ref.Path, ref.Prefix = strings.TrimSuffix(p, "…"), true
				}
				out = append(out, ref)
			}
		}
	}
	return out, nil
}

// Route is a method and a path pattern, parameters in braces: GET /v1/namespaces/{ns}/memories.
type Route struct {
	Method, Path string
}

func (r Route) String() string { return r.Method + " " + r.Path }

// isParam reports whether a path segment is a parameter: {ns}, :ns, <id>.
func isParam(seg string) bool {
	return strings.HasPrefix(seg, "{") || strings.HasPrefix(seg, ":") || strings.HasPrefix(seg, "<") || strings.HasPrefix(seg, "$")
}

// Matches reports whether a path a document names is an instance of the route's pattern: a
// parameter of the pattern takes any one segment, a literal only itself. With prefix, the
// path need only be the start of the pattern (the last segment a start of its segment).
func Matches(pattern, path string, prefix bool) bool {
	ps, ds := strings.Split(strings.Trim(pattern, "/"), "/"), strings.Split(strings.Trim(path, "/"), "/")
	if len(ds) > len(ps) || (!prefix && len(ds) != len(ps)) {
		return false
	}
	for i, d := range ds {
		p := ps[i]
		switch {
		case isParam(p):
		case prefix && i == len(ds)-1 && strings.HasPrefix(p, d):
		case isParam(d) || d != p:
			return false
		}
	}
	return true
}

// methodsRE finds a route as the docs write it: one or more methods joined by / and a path,
// backticks removed first (`GET`/`PUT`/`PATCH /v1/namespaces/{ns}/settings).
var methodsRE = regexp.MustCompile(`\b((?:GET|POST|PUT|PATCH|DELETE)(?:/(?:GET|POST|PUT|PATCH|DELETE))*) (/[A-Za-z0-9_.\-/{}<>:]*)`)

// Documented returns the routes the files document: every method-and-path mention.
func Documented(files []string) ([]Route, error) {
	var out []Route
	for _, path := range files {
		lines, err := Lines(path)
		if err != nil {
			return nil, err
		}
		for _, l := range lines {
			for _, m := range methodsRE.FindAllStringSubmatch(strings.ReplaceAll(l.Text, "`", ""), -1) {
				for _, method := range strings.Split(m[1], "/") {
					out = append(out, Route{Method: method, Path: strings.TrimRight(m[2], ".,:")})
				}
			}
		}
	}
	return out, nil
}

// Anchor is a cited section: docs/NAME.md#section, in a comment or a link.
type Anchor struct {
	From   string // file:line that cites it
	File   string // the Markdown file, relative to the root
	Anchor string
}

// citeRE finds docs/NAME.md#section in code and comments; linkRE finds Markdown links to a
// section, (x.md#a), (../README.md#a) or (#a).
var (
	citeRE = regexp.MustCompile(`\b(docs/[a-z0-9_\-]+\.md)#([a-z0-9_\-]+)`)
	linkRE = regexp.MustCompile(`\]\(((?:\.\./)?[A-Za-z0-9_\-/]*\.md)?#([a-z0-9_\-]+)\)`)
)

// Citations returns the docs/NAME.md#section citations of the files (source, scripts, SQL…),
// paths relative to root.
func Citations(root string, files []string) ([]Anchor, error) {
	var out []Anchor
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(root, path)
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range citeRE.FindAllStringSubmatch(line, -1) {
				out = append(out, Anchor{From: fmt.Sprintf("%s:%d", rel, i+1), File: m[1], Anchor: m[2]})
			}
		}
	}
	return out, nil
}

// Links returns the section links of Markdown files, their targets relative to root.
func Links(root string, files []string) ([]Anchor, error) {
	return proseMatches(root, files, linkRE, func(rel string, m []string) Anchor {
		target := rel
		if m[1] != "" {
			target = filepath.Clean(filepath.Join(filepath.Dir(rel), m[1]))
		}
		return Anchor{File: filepath.ToSlash(target), Anchor: m[2]}
	})
}

// fileLinkRE finds Markdown links and images to a file of the repository: not a URL, not a
// section of the same page.
var fileLinkRE = regexp.MustCompile(`\]\(([^)#\s:]+)(?:#[^)]*)?\)`)

// FileLinks returns the files the Markdown files link to, relative to root.
func FileLinks(root string, files []string) ([]Anchor, error) {
	return proseMatches(root, files, fileLinkRE, func(rel string, m []string) Anchor {
		return Anchor{File: filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(rel), m[1])))}
	})
}

// proseMatches returns an Anchor for each match of re in the Markdown files' lines outside
// code blocks, made by anchor from the file's path relative to root and the match, with
// From set to where it stands.
func proseMatches(root string, files []string, re *regexp.Regexp, anchor func(rel string, m []string) Anchor) ([]Anchor, error) {
	var out []Anchor
	for _, path := range files {
		lines, err := Lines(path)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(root, path)
		for _, l := range lines {
			if l.Code {
				continue
			}
			for _, m := range re.FindAllStringSubmatch(l.Text, -1) {
				a := anchor(rel, m)
				a.From = fmt.Sprintf("%s:%d", rel, l.Number)
				out = append(out, a)
			}
		}
	}
	return out, nil
}

// Anchors returns the anchors of a Markdown file's headings as GitHub makes them: lower
// case, punctuation dropped, spaces to hyphens, a repeated heading numbered -1, -2, ….
func Anchors(path string) (map[string]bool, error) {
	lines, err := Lines(path)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	seen := map[string]int{}
	for _, l := range lines {
		if l.Code || !strings.HasPrefix(l.Text, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(l.Text, "#"))
		slug := Slug(title)
		if n := seen[slug]; n > 0 {
			out[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out, nil
}

// Slug is GitHub's anchor for a heading.
func Slug(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
