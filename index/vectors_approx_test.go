package index

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestQuantizeLiterals(t *testing.T) {
	code := make([]int8, 6)
	code[5] = 9 // padding must be cleared
	scale := quantize(code, []float32{0.5, -0.25, 0, 1, -1})
	// 0.5·127 = 63.5 rounds away from zero; −0.25·127 = −31.75.
	if want := []int8{64, -32, 0, 127, -127, 0}; !slices.Equal(code, want) {
		t.Fatalf("code = %v, want %v", code, want)
	}
	if scale != float32(1)/127 {
		t.Fatalf("scale = %v, want 1/127", scale)
	}
	if s := quantize(code, []float32{0, 0}); s != 0 || !slices.Equal(code, make([]int8, 6)) {
		t.Fatalf("zero vector: scale %v, code %v", s, code)
	}
}

// TestSearchApproxEqualsExact: above ApproxMinRows, through swap-deletes and replacements,
// Search (approximate) returns what brute force does on random vectors, whose top scores are
// well apart compared with the int8 quantization error; and with rescore ≥ Len it is exact
// by construction, also on dimensions that are not a multiple of 32.
func TestSearchApproxEqualsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	const dims = 40 // codes padded to 64
	v := NewVectors(dims)
	ref := map[string][]float32{}
	n := ApproxMinRows + 2000
	v.Grow(n)
	for i := range n {
		id := fmt.Sprintf("v%06d", i)
		vec := randUnit(r, dims)
		if err := v.Add(id, vec); err != nil {
			t.Fatal(err)
		}
		ref[id] = vec
	}
	for i := 0; i < n; i += 7 {
		id := fmt.Sprintf("v%06d", i)
		if i%2 == 0 {
			v.Remove(id)
			delete(ref, id)
		} else {
			vec := randUnit(r, dims)
			if err := v.Add(id, vec); err != nil {
				t.Fatal(err)
			}
			ref[id] = vec
		}
	}
	if v.Len() < ApproxMinRows {
		t.Fatalf("Len = %d, below ApproxMinRows: the test would not exercise the approximate path", v.Len())
	}
	checkCodes(t, v)
	for range 20 {
		q := randUnit(r, dims)
		want := bruteForce(ref, q, 20)
		assertHitsTol(t, v.Search(q, 20), want, 1e-5)
		assertHitsTol(t, v.SearchExact(q, 20), want, 1e-5)
	}
	small := NewVectors(3)
	for i, vec := range [][]float32{{1, 0, 0}, {0, 1, 0}, {0.9, 0.1, 0}, {-1, 0, 0}} {
		if err := small.Add(fmt.Sprint(i), vec); err != nil {
			t.Fatal(err)
		}
	}
	q := []float32{1, 0.05, 0}
	assertHitsTol(t, small.SearchApprox(q, 2, 100), small.SearchExact(q, 2), 0)
	if got := small.SearchApprox(q, 0, 10); got != nil {
		t.Fatalf("k=0 returned %v", got)
	}
}

// checkCodes asserts that v keeps a code for every row, equal to the row's quantization.
func checkCodes(t *testing.T, v *Vectors) {
	t.Helper()
	v.mu.RLock()
	defer v.mu.RUnlock()
	if !v.coded || len(v.codes) != len(v.ids)*v.stride || len(v.scales) != len(v.ids) {
		t.Fatalf("coded %v, %d code bytes and %d scales for %d rows of stride %d", v.coded, len(v.codes), len(v.scales), len(v.ids), v.stride)
	}
	want := make([]byte, v.stride)
	for r := range v.ids {
		scale := quantize4(want, v.data[r*v.dims:(r+1)*v.dims])
		if !slices.Equal(v.codes[r*v.stride:(r+1)*v.stride], want) || v.scales[r] != scale {
			t.Fatalf("row %d (%s): code or scale differs from the row's quantization", r, v.ids[r])
		}
	}
}

// TestVectorsCodesFromThreshold: an index added to one by one has no codes below
// ApproxMinRows and codes for every row from there on, replacements included.
func TestVectorsCodesFromThreshold(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 11))
	v := NewVectors(8)
	for i := range ApproxMinRows - 1 {
		if err := v.Add(fmt.Sprintf("v%06d", i), randUnit(r, 8)); err != nil {
			t.Fatal(err)
		}
	}
	v.Remove("v000000")
	if err := v.Add("v000000", randUnit(r, 8)); err != nil {
		t.Fatal(err)
	}
	if v.coded || v.codes != nil {
		t.Fatalf("codes kept below ApproxMinRows (%d rows)", v.Len())
	}
	q := randUnit(r, 8)
	assertHitsTol(t, v.SearchApprox(q, 10, 20), v.SearchExact(q, 10), 0)
	for _, id := range []string{"x1", "x2", "v000005"} { // the threshold, a new row, a replacement
		if err := v.Add(id, randUnit(r, 8)); err != nil {
			t.Fatal(err)
		}
	}
	checkCodes(t, v)
	v.Remove("v000007")
	checkCodes(t, v)
}

func BenchmarkVectorsSearch100k256(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	v := NewVectors(256)
	v.Grow(100_000)
	for i := range 100_000 {
		if err := v.Add(fmt.Sprintf("v%06d", i), randUnit(r, 256)); err != nil {
			b.Fatal(err)
		}
	}
	qs := make([][]float32, 64)
	for i := range qs {
		qs[i] = randUnit(r, 256)
	}
	b.Run("exact", func(b *testing.B) {
		reportPercentiles(b, func(i int) { v.SearchExact(qs[i%len(qs)], 40) })
	})
	b.Run("approx", func(b *testing.B) {
		reportPercentiles(b, func(i int) { v.SearchApprox(qs[i%len(qs)], 40, Rescore(40)) })
	})
}

// TestBestCodesEqualsOfferAll: the sampled threshold keeps exactly the rows a heap offered
// every row keeps — on random scores, on many ties, on scores whose best rows all sit
// between the sampled ones, and on scores whose best rows are exactly the sampled ones (the
// sample's threshold is then reached by too few rows for k 5,000, and every row is offered).
func TestBestCodesEqualsOfferAll(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 13))
	const n = 50_000
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("v%06d", (i*7919)%n) // ids not in row order: ties go by id
	}
	random := make([]float32, n)
	ties := make([]float32, n)
	hidden := make([]float32, n)
	sampled := make([]float32, n)
	step := n / selectSamples
	for i := range n {
		random[i] = r.Float32()
		ties[i] = float32(r.IntN(50))
		if i%step != 0 && i%3 == 1 {
			hidden[i] = 1 + r.Float32()
		}
		sampled[i] = r.Float32()
		if i%step == 0 {
			sampled[i] = 2
		}
	}
	for name, scores := range map[string][]float32{"random": random, "ties": ties, "hidden": hidden, "sampled": sampled} {
		for _, k := range []int{1, 20, 512, 5000, 20_000} {
			want := topK{k: k, ids: ids}
			offerAll(&want, scores)
			got := topK{k: k, ids: ids}
			bestCodes(&got, scores)
			if !slices.Equal(got.sorted(), want.sorted()) {
				t.Fatalf("%s, k %d: bestCodes kept other rows than offering every row", name, k)
			}
		}
	}
}
