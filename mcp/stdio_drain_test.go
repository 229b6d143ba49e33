package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/salience-ai/salience/api"
	salmcp "github.com/salience-ai/salience/mcp"
)

// slowStub answers every recall after a while, so calls are still in flight when stdin ends.
type slowStub struct{ stub }

func (s *slowStub) Recall(context.Context, api.RecallRequest) (*api.RecallResponse, error) {
	time.Sleep(50 * time.Millisecond)
	return nil, errors.New("dial tcp 127.0.0.1:7700: connection refused")
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) Close() error { return nil }

// TestStdioAnswersEveryCallBeforeEOF: requests piped in and stdin closed straight after, the
// last bytes arriving with the EOF itself: every call gets its answer before Run returns.
func TestStdioAnswersEveryCallBeforeEOF(t *testing.T) {
	const n = 5
	var in strings.Builder
	in.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"v0"}}}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search_memories","arguments":{"query":"q%d"}}}`+"\n", i, i)
	}
	out := &lockedBuffer{}
	stdin := io.NopCloser(iotest.DataErrReader(strings.NewReader(in.String())))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	err := salmcp.NewServer(&slowStub{}, salmcp.Options{}).Run(ctx, salmcp.NewStdioTransport(stdin, out))
	if err != nil && !errors.Is(err, io.EOF) {
		t.Fatalf("Run: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Run took %v: it waited for answers it already gave", d)
	}
	answered := map[int]bool{}
	dec := json.NewDecoder(bytes.NewReader(out.b.Bytes()))
	for dec.More() {
		var msg struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := dec.Decode(&msg); err != nil {
			t.Fatalf("stdout: %v\n%s", err, out.b.String())
		}
		if msg.ID != nil && msg.Result != nil {
			answered[*msg.ID] = true
		}
	}
	for i := 0; i <= n; i++ {
		if !answered[i] {
			t.Errorf("call %d has no answer\n%s", i, out.b.String())
		}
	}
}
