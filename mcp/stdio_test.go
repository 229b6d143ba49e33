package mcp

import "testing"

func TestClassify(t *testing.T) {
	cases := []struct {
		msg            string
		calls, answers int
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, 1, 0},
		{`{"jsonrpc":"2.0","id":"a","method":"ping"}`, 1, 0},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0, 0},
		{`{"jsonrpc":"2.0","id":null,"method":"x"}`, 0, 0},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, 0, 1},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32600}}`, 0, 1},
		{`[{"id":1,"method":"a"},{"id":2,"method":"b"},{"method":"n"}]`, 2, 0},
		{`[{"id":1,"result":1},{"id":2,"error":{}}]`, 0, 2},
		{`not json`, 0, 0},
	}
	for _, c := range cases {
		calls, answers := classify([]byte(c.msg))
		if calls != c.calls || answers != c.answers {
			t.Errorf("classify(%s) = %d calls, %d answers, want %d, %d", c.msg, calls, answers, c.calls, c.answers)
		}
	}
}

// FuzzClassify: any bytes are counted without a panic, and never as a negative count.
func FuzzClassify(f *testing.F) {
	f.Add([]byte(`{"id":1,"method":"a"}`))
	f.Add([]byte(`[{"id":1,"result":1},{"id":2,"error":{}}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if calls, answers := classify(b); calls < 0 || answers < 0 {
			t.Fatalf("classify(%q) = %d, %d", b, calls, answers)
		}
	})
}
