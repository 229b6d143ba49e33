package index

import "testing"

// hugeSpan covers exactly the whole huge pages inside the bytes it is given.
func TestHugeSpan(t *testing.T) {
	const h = hugePage
	for _, c := range []struct{ p, size, from, n uintptr }{
		{0, 4 * h, 0, 4 * h},
		{h, 2 * h, 0, 2 * h},
		{h + 1, 3 * h, h - 1, 2 * h}, // from the next boundary to the last one inside
		{h + 1, 2*h - 1, h - 1, h},   // ends exactly on a boundary
		{h + 1, 2*h - 2, 0, 0},       // one byte short of a whole page
		{5*h - 10, 20, 0, 0},         // straddles a boundary, no whole page
		{3 * h, 0, 0, 0},             // empty
		{7*h + 4096, 10 * h, h - 4096, 9 * h},
	} {
		from, n := hugeSpan(c.p, c.size)
		if from != c.from || n != c.n {
			t.Errorf("hugeSpan(%#x, %#x) = %#x, %#x; want %#x, %#x", c.p, c.size, from, n, c.from, c.n)
		}
		if n > 0 && ((c.p+from)%h != 0 || n%h != 0 || from+n > c.size) {
			t.Errorf("hugeSpan(%#x, %#x) = %#x, %#x: not whole pages inside", c.p, c.size, from, n)
		}
	}
	adviseHuge(make([]byte, 5*h)) // and the call itself is harmless
	adviseHuge([]gedge(nil))
}
