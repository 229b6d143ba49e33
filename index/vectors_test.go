package index

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestVectorsSearchExact(t *testing.T) {
	v := NewVectors(3)
	for _, tc := range []struct {
		id  string
		vec []float32
	}{
		{"z", []float32{0, 0, 2}}, // normalized on Add to (0,0,1)
		{"x", []float32{1, 0, 0}},
		{"xy", []float32{1, 1, 0}},
		{"y", []float32{0, 1, 0}},
	} {
		if err := v.Add(tc.id, tc.vec); err != nil {
			t.Fatal(err)
		}
	}
	s := float64(float32(1 / math.Sqrt2))
	got := v.Search([]float32{3, 0, 0}, 3)
	want := []Hit{{ID: "x", Score: 1}, {ID: "xy", Score: s}, {ID: "y", Score: 0}}
	// y and z both score 0; y wins the tie by id.
	assertHitsTol(t, got, want, 1e-6)
	if got := v.Get("z"); !slices.Equal(got, []float32{0, 0, 1}) {
		t.Fatalf("Get(z) = %v, want the normalized vector", got)
	}
	if v.Len() != 4 || v.Dims() != 3 {
		t.Fatalf("Len, Dims = %d, %d", v.Len(), v.Dims())
	}
}

func assertHitsTol(t *testing.T, got, want []Hit, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i].ID != want[i].ID || math.Abs(got[i].Score-want[i].Score) > tol {
			t.Fatalf("hit %d: got %+v, want %+v (all %v)", i, got[i], want[i], got)
		}
	}
}

func TestVectorsErrors(t *testing.T) {
	v := NewVectors(2)
	if err := v.Add("a", []float32{1, 2, 3}); err == nil {
		t.Fatal("wrong dimension accepted")
	}
	if err := v.Add("a", []float32{float32(math.NaN()), 1}); err == nil {
		t.Fatal("NaN accepted")
	}
	if v.Len() != 0 {
		t.Fatalf("Len = %d after rejected adds", v.Len())
	}
	if err := v.Add("a", []float32{1, 0}); err != nil {
		t.Fatal(err)
	}
	if got := v.Search([]float32{1, 0, 0}, 5); got != nil {
		t.Fatalf("wrong-dimension query returned %v", got)
	}
	if got := v.Search([]float32{1, 0}, 0); got != nil {
		t.Fatalf("k=0 returned %v", got)
	}
	if got := v.Get("missing"); got != nil {
		t.Fatalf("Get(missing) = %v", got)
	}
}

func TestNormalizeKeepsUnitVectors(t *testing.T) {
	in := []float32{0.6, 0.8}
	out, err := Normalize(in)
	if err != nil || &out[0] != &in[0] {
		t.Fatalf("unit vector was copied or failed: %v %v", out, err)
	}
	out, err = Normalize([]float32{3, 4})
	if err != nil || !slices.Equal(out, []float32{0.6, 0.8}) {
		t.Fatalf("Normalize(3,4) = %v, %v", out, err)
	}
	out, _ = Normalize([]float32{0, 0})
	if !slices.Equal(out, []float32{0, 0}) {
		t.Fatalf("zero vector changed: %v", out)
	}
}

func randUnit(r *rand.Rand, dims int) []float32 {
	v := make([]float32, dims)
	var ss float64
	for i := range v {
		f := r.NormFloat64()
		v[i] = float32(f)
		ss += f * f
	}
	n := math.Sqrt(ss)
	for i := range v {
		v[i] = float32(float64(v[i]) / n)
	}
	return v
}

// bruteForce is the reference: float64 dot products over a map.
func bruteForce(vecs map[string][]float32, q []float32, k int) []Hit {
	var hs []Hit
	for id, v := range vecs {
		s := 0.0
		for i := range v {
			s += float64(v[i]) * float64(q[i])
		}
		hs = append(hs, Hit{ID: id, Score: s})
	}
	slices.SortFunc(hs, func(a, b Hit) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
	return hs[:min(k, len(hs))]
}

// TestVectorsMatchesBruteForce runs above the parallel threshold, through swap-deletes and
// replacements, and checks the top 10 against float64 brute force.
func TestVectorsMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const dims = 16
	v := NewVectors(dims)
	ref := map[string][]float32{}
	for i := range parallelRows + 1000 {
		id := fmt.Sprintf("v%05d", i)
		vec := randUnit(r, dims)
		if err := v.Add(id, vec); err != nil {
			t.Fatal(err)
		}
		ref[id] = vec
	}
	for i := 0; i < parallelRows+1000; i += 3 {
		id := fmt.Sprintf("v%05d", i)
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
	v.Remove("missing")
	if v.Len() != len(ref) {
		t.Fatalf("Len = %d, want %d", v.Len(), len(ref))
	}
	for range 20 {
		q := randUnit(r, dims)
		assertHitsTol(t, v.Search(q, 10), bruteForce(ref, q, 10), 1e-5)
	}
	for id, want := range ref {
		if got := v.Get(id); !slices.Equal(got, want) {
			t.Fatalf("Get(%s) = %v, want %v", id, got, want)
		}
	}
}

// TestVectorsGetMany: copies of the stored (normalized) vectors in the order asked, nil for
// a missing id, each its own: writing or appending to one changes neither the index nor the
// others.
func TestVectorsGetMany(t *testing.T) {
	v := NewVectors(2)
	for id, vec := range map[string][]float32{"a": {3, 4}, "b": {0, 2}} {
		if err := v.Add(id, vec); err != nil {
			t.Fatal(err)
		}
	}
	got := v.GetMany([]string{"b", "x", "a", "b"})
	want := [][]float32{{0, 1}, nil, {0.6, 0.8}, {0, 1}}
	if len(got) != len(want) {
		t.Fatalf("GetMany returned %d vectors, want %d", len(got), len(want))
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) || (want[i] == nil) != (got[i] == nil) {
			t.Fatalf("GetMany[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	got[0][0] = 9
	_ = append(got[0], 7) // capped: must not write into got[2]
	if !slices.Equal(got[2], []float32{0.6, 0.8}) || !slices.Equal(v.Get("b"), []float32{0, 1}) {
		t.Fatalf("a copy aliases another or the index: got[2] %v, stored b %v", got[2], v.Get("b"))
	}
}

// TestSplitScan: a scan of parallelRows or more rows that runs alone is shared with a
// helper, splitChunk rows at a time, every row once; it is done in one piece beside another
// scan (whose cores are busy) or when small; and it never waits for a helper that has not
// started, which then scans nothing.
func TestSplitScan(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	type call struct{ worker, lo, hi int }
	run := func(n int, scan func(c call)) []call {
		var mu sync.Mutex
		var calls []call
		splitScan(n, func(worker, lo, hi int) {
			c := call{worker, lo, hi}
			if scan != nil {
				scan(c)
			}
			mu.Lock()
			calls = append(calls, c)
			mu.Unlock()
		})
		mu.Lock()
		defer mu.Unlock()
		slices.SortFunc(calls, func(a, b call) int { return a.lo - b.lo })
		return calls
	}
	// The pieces, in row order, cover [0, n) once, splitChunk rows each but the last.
	covers := func(calls []call, n int) bool {
		lo := 0
		for _, c := range calls {
			if c.lo != lo || c.hi > n || (c.hi-c.lo != splitChunk && c.hi != n) {
				return false
			}
			lo = c.hi
		}
		return lo == n
	}

	// Alone: each worker's first piece waits until the other has claimed one, so both
	// take part however the two goroutines are scheduled (a helper that ran first used
	// to claim every piece before the caller claimed its first).
	n := 3*splitChunk + 10
	claimed := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
	var once [2]sync.Once
	calls := run(n, func(c call) {
		once[c.worker].Do(func() { close(claimed[c.worker]) })
		select {
		case <-claimed[1-c.worker]:
		case <-time.After(5 * time.Second):
			t.Errorf("worker %d never saw the other claim a piece", c.worker)
		}
	})
	workers := map[int]int{}
	for _, c := range calls {
		workers[c.worker]++
	}
	if !covers(calls, n) || workers[0] == 0 || workers[1] == 0 || len(workers) != 2 {
		t.Fatalf("alone: %v", calls)
	}

	// A helper held back until the scan is over: the caller scans everything, returns
	// without it, and the helper, let go, scans nothing.
	release, exited := make(chan struct{}), make(chan struct{})
	goHelper = func(f func()) {
		go func() {
			<-release
			f()
			close(exited)
		}()
	}
	ran := make(chan []call)
	go func() { ran <- run(n, nil) }()
	select {
	case calls = <-ran:
	case <-time.After(5 * time.Second):
		t.Fatal("the scan waited for a helper that had not started")
	}
	goHelper = func(f func()) { go f() }
	for _, c := range calls {
		if c.worker != 0 {
			t.Fatalf("held-back helper scanned %v", c)
		}
	}
	if !covers(calls, n) {
		t.Fatalf("without the helper: %v", calls)
	}
	close(release)
	<-exited

	if got, want := run(parallelRows-1, nil), []call{{0, 0, parallelRows - 1}}; !slices.Equal(got, want) {
		t.Fatalf("small: %v, want %v", got, want)
	}
	scanning.Add(1) // another scan running
	got := run(n, nil)
	scanning.Add(-1)
	if want := []call{{0, 0, n}}; !slices.Equal(got, want) {
		t.Fatalf("beside another scan: %v, want %v", got, want)
	}
	if scanning.Load() != 0 {
		t.Fatalf("scanning = %d after the scans", scanning.Load())
	}
}
