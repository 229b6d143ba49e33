package experiment

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// goldenInput is a three-variant experiment over five days: the known-value pair plus a
// third variant that is clearly worse, so the goldens hold every outcome column filled.
func goldenInput() Input {
	in := knownInput()
	in.Variants = append(in.Variants, Tally{Variant: "long", Share: 0.5, Conversations: 5100, Turns: 4050,
		Surfaced: 5000, Used: 500, Helpful: 250, Ignored: 4000, Dismissed: 250, LatenciesMS: []float64{12, 18, 22}})
	for i := range in.Variants {
		v := &in.Variants[i]
		for d := range 5 {
			v.Days = append(v.Days, DayTally{Day: day0.AddDate(0, 0, d), Turns: v.Turns / 5, Surfaced: v.Surfaced / 5,
				Used: v.Used / 5, Helpful: v.Helpful / 5, Ignored: v.Ignored / 5, Dismissed: v.Dismissed / 5})
		}
	}
	in.Variants[0].Days[4].Used++ // one uneven day, so the band is not flat
	return in
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./experiment -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./experiment -update rewrites it):\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

func TestGoldenRenderings(t *testing.T) {
	r := Analyze(goldenInput())
	for _, tc := range []struct {
		file  string
		write func(*bytes.Buffer, Report) error
	}{
		{"report.json", func(b *bytes.Buffer, r Report) error { return WriteJSON(b, r) }},
		{"report.csv", func(b *bytes.Buffer, r Report) error { return WriteCSV(b, r) }},
		{"report.txt", func(b *bytes.Buffer, r Report) error { return WriteText(b, r) }},
	} {
		var b bytes.Buffer
		if err := tc.write(&b, r); err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		golden(t, tc.file, b.Bytes())
	}
}

func TestCSVShape(t *testing.T) {
	in := goldenInput()
	in.Variants[1].Variant = "=HYPERLINK(\"x\")"
	var b bytes.Buffer
	if err := WriteCSV(&b, Analyze(in)); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatalf("CSV does not parse: %v", err)
	}
	if len(rows) != 1+len(in.Variants) {
		t.Fatalf("%d rows, want a header and %d variants", len(rows), len(in.Variants))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	if got := rows[2][col["variant"]]; got != "'=HYPERLINK(\"x\")" {
		t.Errorf("formula-like variant written as %q, want it defused with a leading apostrophe", got)
	}
	if got := rows[1][col["difference"]]; got != "" {
		t.Errorf("control row has difference %q, want empty", got)
	}
	if got := rows[3][col["outcome"]]; got != "worse" {
		t.Errorf("long's outcome %q, want worse", got)
	}
	if got := rows[2][col["prob_beat_control"]]; !strings.HasPrefix(got, "0.996283") {
		t.Errorf("short's prob_beat_control %q", got)
	}
}

func TestTextEscapesTerminalControls(t *testing.T) {
	in := goldenInput()
	in.Name = "evil\x1b[2Jname"
	var b bytes.Buffer
	if err := WriteText(&b, Analyze(in)); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsRune(b.String(), '\x1b') {
		t.Error("an escape sequence in the name reached the terminal")
	}
	if !strings.Contains(b.String(), "evil\uFFFD[2Jname") {
		t.Error("name not shown with the control character replaced")
	}
}

// TestHTMLPage parses the page and checks what the browser test and a reader rely on: the
// ids, the two tables' rows, an <svg> inside each plot wrapper, no external resource, and
// operator-typed names escaped (they come back as text, never as elements).
func TestHTMLPage(t *testing.T) {
	in := goldenInput()
	in.Name = `<script>alert("name")</script>`
	in.Variants[1].Variant = `short<img src=x onerror=alert(1)>`
	var b bytes.Buffer
	if err := WriteHTML(&b, Analyze(in)); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*html.Node{}
	var scripts, imgs, external int
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "script":
				scripts++
			case "img":
				imgs++
			case "link", "iframe", "object", "embed":
				external++
			}
			for _, a := range n.Attr {
				switch {
				case a.Key == "id":
					byID[a.Val] = n
				case a.Key == "src", a.Key == "href", a.Key == "xlink:href" && !strings.HasPrefix(a.Val, "#"):
					external++
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if scripts != 0 || imgs != 0 || external != 0 {
		t.Errorf("page has %d scripts, %d images, %d external references; want none", scripts, imgs, external)
	}
	for id, tag := range map[string]string{
		"summary-table": "table", "comparison-table": "table",
		"plot-precision": "figure", "plot-posterior": "figure", "srm": "p",
	} {
		n := byID[id]
		if n == nil || n.Data != tag {
			t.Errorf("no <%s id=%q>", tag, id)
		}
	}
	for _, id := range []string{"plot-precision", "plot-posterior"} {
		if n := byID[id]; n != nil && count(n, "svg") != 1 {
			t.Errorf("#%s holds %d <svg>, want 1", id, count(n, "svg"))
		}
		if n := byID[id]; n != nil && count(n, "path") < 2 {
			t.Errorf("#%s draws %d paths, want curves", id, count(n, "path"))
		}
	}
	if n := byID["summary-table"]; n != nil && count(n, "tr") != 1+len(in.Variants) {
		t.Errorf("summary table has %d rows, want header + %d", count(n, "tr"), len(in.Variants))
	}
	if n := byID["comparison-table"]; n != nil && count(n, "tr") != len(in.Variants) {
		t.Errorf("comparison table has %d rows, want header + %d", count(n, "tr"), len(in.Variants)-1)
	}
	if n := byID["summary-table"]; n != nil && !strings.Contains(text(n), in.Variants[1].Variant) {
		t.Error("the variant's name is not in the summary table as text")
	}
	if !strings.Contains(text(doc), in.Name) {
		t.Error("the experiment's name is not on the page as text")
	}
	if s := b.String(); strings.Contains(s, "<script") || strings.Contains(s, "<img") {
		t.Error("a name reached the page unescaped")
	}
}

func count(n *html.Node, tag string) int {
	c := 0
	if n.Type == html.ElementNode && n.Data == tag {
		c++
	}
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		c += count(ch, tag)
	}
	return c
}

func text(n *html.Node) string {
	if n.Type == html.TextNode {
		return n.Data
	}
	var sb strings.Builder
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		sb.WriteString(text(ch))
	}
	return sb.String()
}

func TestWritePNG(t *testing.T) {
	r := Analyze(goldenInput())
	for _, name := range []string{PlotPrecision, PlotPosterior} {
		var b bytes.Buffer
		if err := WritePNG(&b, r, name); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		img, err := png.Decode(&b)
		if err != nil {
			t.Fatalf("%s: not a PNG: %v", name, err)
		}
		if s := img.Bounds().Size(); s.X < 500 || s.Y < 250 {
			t.Errorf("%s: %v pixels", name, s)
		}
	}
	if err := WritePNG(&bytes.Buffer{}, r, "pie"); !errors.Is(err, ErrUnknownPlot) {
		t.Errorf("WritePNG(pie) = %v, want ErrUnknownPlot", err)
	}
	// (An empty experiment's plots are drawn, as SVG, by TestAnalyzeDegenerateInputIsValidJSON:
	// rasterizing is slow under -race, so this test draws only the two PNGs it must.)
}

// TestJSONRoundTrip: a report read back from its JSON (a stored snapshot) renders the same
// JSON, CSV, text and HTML, so a snapshot gives the numbers of the day it was taken.
func TestJSONRoundTrip(t *testing.T) {
	r := Analyze(goldenInput())
	var first bytes.Buffer
	if err := WriteJSON(&first, r); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(first.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	for name, w := range map[string]func(*bytes.Buffer, Report) error{
		"json": func(b *bytes.Buffer, r Report) error { return WriteJSON(b, r) },
		"csv":  func(b *bytes.Buffer, r Report) error { return WriteCSV(b, r) },
		"text": func(b *bytes.Buffer, r Report) error { return WriteText(b, r) },
		"html": func(b *bytes.Buffer, r Report) error { return WriteHTML(b, r) },
	} {
		var a, b bytes.Buffer
		if err := w(&a, r); err != nil {
			t.Fatal(err)
		}
		if err := w(&b, back); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("%s of the decoded report differs:\n%s\nvs\n%s", name, b.Bytes(), a.Bytes())
		}
	}
}
