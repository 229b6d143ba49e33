package neo4j

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// querySinks are the functions and methods whose query argument must be constant Cypher,
// with the index of that argument. Run is the driver's (tx.Run,
// session.Run); collect, exec and writeOne are this package's.
var querySinks = map[string]int{"Run": 1, "collect": 2, "exec": 2, "execCount": 2, "ExecuteQuery": 2, "writeOne": 2}

// cypherChecker finds Cypher built from values. A query argument passes when it is static:
// a string literal, a package-level constant, a concatenation of static parts, or an
// element of a package-level table whose every element is static. Anything else — a
// variable, fmt.Sprintf, strings.Join, a function call — could carry a value that belongs
// in a parameter and fails the check.
type cypherChecker struct {
	consts map[string]bool // package-level constants
	tables map[string]bool // package-level vars holding only static strings
}

func newCypherChecker(files []*ast.File) *cypherChecker {
	c := &cypherChecker{consts: map[string]bool{}, tables: map[string]bool{}}
	for _, f := range files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, sp := range gd.Specs {
				for _, n := range sp.(*ast.ValueSpec).Names {
					c.consts[n.Name] = true
				}
			}
		}
	}
	// Tables may refer to constants (and to other tables), so settle them after.
	for changed := true; changed; {
		changed = false
		for _, f := range files {
			for _, d := range f.Decls {
				gd, ok := d.(*ast.GenDecl)
				if !ok || gd.Tok != token.VAR {
					continue
				}
				for _, sp := range gd.Specs {
					vs := sp.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if c.tables[n.Name] || i >= len(vs.Values) {
							continue
						}
						if cl, ok := vs.Values[i].(*ast.CompositeLit); ok && c.staticTable(cl) {
							c.tables[n.Name] = true
							changed = true
						}
					}
				}
			}
		}
	}
	return c
}

func (c *cypherChecker) staticTable(cl *ast.CompositeLit) bool {
	for _, e := range cl.Elts {
		if kv, ok := e.(*ast.KeyValueExpr); ok {
			e = kv.Value
		}
		if inner, ok := e.(*ast.CompositeLit); ok {
			if !c.staticTable(inner) {
				return false
			}
			continue
		}
		if !c.static(e) {
			return false
		}
	}
	return true
}

func (c *cypherChecker) static(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.BasicLit:
		return e.Kind == token.STRING
	case *ast.Ident:
		return c.consts[e.Name]
	case *ast.ParenExpr:
		return c.static(e.X)
	case *ast.BinaryExpr:
		return e.Op == token.ADD && c.static(e.X) && c.static(e.Y)
	case *ast.IndexExpr:
		for x := e.X; ; {
			switch v := x.(type) {
			case *ast.Ident:
				return c.tables[v.Name]
			case *ast.IndexExpr:
				x = v.X
			default:
				return false
			}
		}
	}
	return false
}

// violations returns "file:line: call" for each query sink called with a query that is not
// static.
func (c *cypherChecker) violations(fset *token.FileSet, files []*ast.File) []string {
	var out []string
	for _, f := range files {
		var inSink *ast.FuncDecl // a sink passing its own query parameter on is checked at its callers
		ast.Inspect(f, func(n ast.Node) bool {
			if fd, ok := n.(*ast.FuncDecl); ok {
				inSink = nil
				// A method named as a sink (autoCommit.Run) is one too: its callers are checked.
				if _, ok := querySinks[fd.Name.Name]; ok {
					inSink = fd
				}
				return true
			}
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			name := ""
			switch fn := call.Fun.(type) {
			case *ast.Ident:
				name = fn.Name
			case *ast.SelectorExpr:
				name = fn.Sel.Name
			case *ast.IndexExpr: // a generic call, neo4j.ExecuteQuery[T]
				if sel, ok := fn.X.(*ast.SelectorExpr); ok {
					name = sel.Sel.Name
				}
			}
			idx, ok := querySinks[name]
			if !ok || idx >= len(call.Args) {
				return true
			}
			if inSink != nil && isParam(inSink, call.Args[idx]) {
				return true
			}
			if !c.static(call.Args[idx]) {
				out = append(out, fset.Position(call.Pos()).String()+": "+name)
			}
			return true
		})
	}
	return out
}

// isParam reports whether e is one of fd's parameters.
func isParam(fd *ast.FuncDecl, e ast.Expr) bool {
	id, ok := e.(*ast.Ident)
	if !ok {
		return false
	}
	for _, f := range fd.Type.Params.List {
		for _, n := range f.Names {
			if n.Name == id.Name {
				return true
			}
		}
	}
	return false
}

// cypherWords are what Cypher text looks like; fmt must never format them.
var cypherWords = regexp.MustCompile(`\b(MATCH|MERGE|CREATE|RETURN|UNWIND|DELETE|CALL|WHERE)\b`)

// formattedCypher returns fmt calls whose format string holds Cypher.
func formattedCypher(fset *token.FileSet, files []*ast.File) []string {
	var out []string
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "fmt" || !strings.HasPrefix(sel.Sel.Name, "Sprint") {
				return true
			}
			if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && cypherWords.MatchString(s) {
					out = append(out, fset.Position(call.Pos()).String())
				}
			}
			return true
		})
	}
	return out
}

func parsePackage(t *testing.T) (*token.FileSet, []*ast.File) {
	t.Helper()
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, p, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if len(files) < 5 {
		t.Fatalf("parsed %d files; is the test running in the package directory?", len(files))
	}
	return fset, files
}

// TestCypherIsConstant fails when any query this package sends is built from a value (the
// namespace above all) instead of taking it as a parameter.
func TestCypherIsConstant(t *testing.T) {
	fset, files := parsePackage(t)
	c := newCypherChecker(files)
	if v := c.violations(fset, files); len(v) > 0 {
		t.Fatalf("queries not built from constants only (pass values as parameters):\n%s", strings.Join(v, "\n"))
	}
	if v := formattedCypher(fset, files); len(v) > 0 {
		t.Fatalf("Cypher formatted with fmt:\n%s", strings.Join(v, "\n"))
	}
	// The check sees the package's queries at all: the sinks are called many times.
	calls := 0
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				if id, ok := call.Fun.(*ast.Ident); ok && (id.Name == "collect" || id.Name == "exec" || id.Name == "execCount") {
					calls++
				}
			}
			return true
		})
	}
	if calls < 30 {
		t.Fatalf("found %d query calls; the checker does not see the package's queries", calls)
	}
}

// TestCypherCheckerCatches proves the checker flags the ways a value sneaks into Cypher.
func TestCypherCheckerCatches(t *testing.T) {
	const src = `package p
const q = "MATCH (m:Memory {ns: $ns}) RETURN m"
const part = " RETURN m"
var table = [2]string{q, q + part}
var mixed = []string{q, "x" + strings.ToUpper("y")}
func ok(ctx, tx any, ns string, i int) {
	collect(ctx, tx, q, nil)
	exec(ctx, tx, "MATCH (n) " + part, nil)
	collect(ctx, tx, table[i], nil)
	tx.Run(ctx, q, nil)
}
func bad(ctx, tx any, ns string, i int) {
	collect(ctx, tx, "MATCH (m:Memory {ns: '" + ns + "'}) RETURN m", nil)
	exec(ctx, tx, fmt.Sprintf("MATCH (m {ns: '%s'})", ns), nil)
	query := q
	tx.Run(ctx, query, nil)
	collect(ctx, tx, mixed[i], nil)
	collect(ctx, tx, strings.Join([]string{q, ns}, " "), nil)
}
func formats(ns string) string { return fmt.Sprintf("MATCH (m {ns: '%s'}) RETURN m", ns) }
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	files := []*ast.File{f}
	got := newCypherChecker(files).violations(fset, files)
	var lines []string
	for _, v := range got {
		lines = append(lines, strings.Split(v, ":")[1])
	}
	if want := []string{"13", "14", "16", "17", "18"}; strings.Join(lines, ",") != strings.Join(want, ",") {
		t.Fatalf("flagged lines %v (%v), want %v", lines, got, want)
	}
	if got := formattedCypher(fset, files); len(got) != 2 { // line 14 and formats
		t.Fatalf("fmt-built Cypher found %v, want 2", got)
	}
}
