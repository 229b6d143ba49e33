package embed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
)

// TestStaticTableChecksum: the embedded table is the one the distillation script printed;
// a changed table needs a new StaticName (namespaces store it) and a new TableSHA256.
func TestStaticTableChecksum(t *testing.T) {
	sum := sha256.Sum256(staticTable)
	if got := hex.EncodeToString(sum[:]); got != TableSHA256 {
		t.Fatalf("static/table.bin SHA-256 %s, want %s (rebuilt? bump StaticName's version too)", got, TableSHA256)
	}
	recorded, err := os.ReadFile("static/table.sha256")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(recorded), TableSHA256+"  table.bin") {
		t.Fatalf("static/table.sha256 does not record %s", TableSHA256)
	}
	vs := sha256.Sum256([]byte(staticVocab))
	if !strings.Contains(string(recorded), hex.EncodeToString(vs[:])+"  vocab.txt") {
		t.Fatal("static/vocab.txt does not match static/table.sha256")
	}
}

// TestStaticMatchesScript: sentences embedded in Go equal the script's embedding of them
// with the same table (testdata/static_golden.json, distill.py golden) to 1e-4.
func TestStaticMatchesScript(t *testing.T) {
	raw, err := os.ReadFile("testdata/static_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Text string    `json:"text"`
		Vec  []float64 `json:"vec"`
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	s, err := NewStatic()
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 3 {
		t.Fatalf("%d golden sentences", len(cases))
	}
	for _, c := range cases {
		v, err := s.Embed(context.Background(), []string{c.Text})
		if err != nil {
			t.Fatal(err)
		}
		if len(v[0]) != len(c.Vec) {
			t.Fatalf("%q: %d dims, want %d", c.Text, len(v[0]), len(c.Vec))
		}
		worst := 0.0
		for i := range c.Vec {
			worst = math.Max(worst, math.Abs(float64(v[0][i])-c.Vec[i]))
		}
		if worst > 1e-4 {
			t.Errorf("%q: differs from the script by %.2g", c.Text, worst)
		}
	}
}

func TestStaticVectors(t *testing.T) {
	s, err := NewStatic()
	if err != nil {
		t.Fatal(err)
	}
	if s.Dims() != StaticDims || s.Name() != StaticName {
		t.Fatalf("Dims %d Name %q", s.Dims(), s.Name())
	}
	vs, _ := s.Embed(context.Background(), []string{
		"I'm lactose intolerant, so I stay away from milk products.",
		"Can she have cheese?",
		"The printer at the office jammed again.",
		"", "!!! ...", "\x00\u200b",
	})
	cos := func(a, b []float32) float64 {
		var d float64
		for i := range a {
			d += float64(a[i]) * float64(b[i])
		}
		return d
	}
	for i, v := range vs[:3] {
		if n := cos(v, v); math.Abs(n-1) > 1e-5 {
			t.Errorf("vector %d has squared norm %v, want 1", i, n)
		}
	}
	// meaning, not spelling: cheese is nearer dairy than printers, with no shared word
	if near, far := cos(vs[0], vs[1]), cos(vs[2], vs[1]); near <= far {
		t.Errorf("cos(dairy, cheese) %.3f <= cos(printer, cheese) %.3f", near, far)
	}
	if n := cos(vs[3], vs[3]); n != 0 {
		t.Errorf("empty text: squared norm %v, want the zero vector", n)
	}
	if n := cos(vs[5], vs[5]); n != 0 {
		t.Errorf("control characters only: squared norm %v, want the zero vector", n)
	}
	if n := cos(vs[4], vs[4]); math.Abs(n-1) > 1e-5 {
		t.Errorf("punctuation is tokens too: squared norm %v, want 1", n)
	}
}

func TestParseStaticRejectsBadTables(t *testing.T) {
	for name, b := range map[string][]byte{
		"empty":     nil,
		"magic":     []byte("NOTATABLE0000000"),
		"truncated": staticTable[:len(staticTable)-1],
	} {
		if _, err := parseStatic(b, staticVocab); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

func BenchmarkStaticEmbed(b *testing.B) {
	s, err := NewStatic()
	if err != nil {
		b.Fatal(err)
	}
	texts := []string{"Caroline: I went to a LGBTQ support group yesterday and it was so powerful."}
	b.ReportAllocs()
	for b.Loop() {
		s.Embed(context.Background(), texts)
	}
}

// TestStaticConcurrent: one shared table serves parallel callers with the same vectors.
func TestStaticConcurrent(t *testing.T) {
	s, err := NewStatic()
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"Can she have cheese?", "We adopted a rescue puppy called Biscuit.", "東京 café"}
	want, _ := s.Embed(context.Background(), texts)
	done := make(chan error, 8)
	for range 8 {
		go func() {
			again, _ := s.Embed(context.Background(), texts)
			for i := range want {
				for j := range want[i] {
					if again[i][j] != want[i][j] {
						done <- fmt.Errorf("text %d dim %d: %v, want %v", i, j, again[i][j], want[i][j])
						return
					}
				}
			}
			done <- nil
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
	if other, err := NewStatic(); err != nil || other != s {
		t.Errorf("NewStatic is parsed once and shared: got %p, %v", other, err)
	}
}
