package mcp

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxDrain bounds how long the end of stdin waits for the answers still owed: a call the
// client cancelled may never be answered, and a bridge must still exit.
const maxDrain = time.Minute

// NewStdioTransport is the SDK's newline-delimited JSON transport over stdin and stdout,
// except that the end of stdin reaches the SDK only once every call read before it has been
// answered on stdout. The SDK cancels the calls in flight when its reader sees EOF, so an
// agent that writes its requests and closes stdin straight after (a script piping a file)
// lost the answers still being computed.
func NewStdioTransport(stdin io.ReadCloser, stdout io.WriteCloser) mcp.Transport {
	d := &drain{changed: make(chan struct{}), closed: make(chan struct{})}
	pr, pw := io.Pipe()
	r := &drainReader{d: d, r: stdin, counter: pw, counted: make(chan struct{})}
	go r.count(pr)
	return &mcp.IOTransport{Reader: r, Writer: &drainWriter{d: d, w: stdout}}
}

// drain counts the calls read and the answers written.
type drain struct {
	mu        sync.Mutex
	calls     int
	answers   int
	changed   chan struct{} // closed and replaced on each answer
	closed    chan struct{} // closed when the SDK closes the connection
	closeOnce sync.Once
}

func (d *drain) add(calls, answers int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls += calls
	d.answers += answers
	if answers > 0 {
		close(d.changed)
		d.changed = make(chan struct{})
	}
}

// wait returns once every call counted has an answer, the connection is closed, or maxDrain
// has passed.
func (d *drain) wait() {
	deadline := time.NewTimer(maxDrain)
	defer deadline.Stop()
	for {
		d.mu.Lock()
		owed, changed := d.calls-d.answers, d.changed
		d.mu.Unlock()
		if owed <= 0 {
			return
		}
		select {
		case <-changed:
		case <-d.closed:
			return
		case <-deadline.C:
			return
		}
	}
}

// drainReader passes stdin to the SDK and a copy to a decoder that counts the calls in it.
type drainReader struct {
	d       *drain
	r       io.ReadCloser
	counter *io.PipeWriter
	counted chan struct{} // closed when the counting decoder has read all it will
}

func (r *drainReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.counter.Write(p[:n]) // an error means the counter stopped on bad input; the SDK reports it
	}
	if err == io.EOF {
		if n > 0 {
			// The last bytes came with the EOF: the SDK must read them before the wait, or
			// it would wait for answers to calls it never saw. The next Read ends.
			return n, nil
		}
		r.counter.Close()
		select {
		case <-r.counted:
		case <-r.d.closed:
		}
		r.d.wait()
	}
	return n, err
}

func (r *drainReader) Close() error {
	r.d.closeOnce.Do(func() { close(r.d.closed) })
	r.counter.CloseWithError(io.ErrClosedPipe)
	return r.r.Close()
}

// count decodes the messages of stdin and counts the calls: requests with an id.
func (r *drainReader) count(pr *io.PipeReader) {
	defer close(r.counted)
	dec := json.NewDecoder(pr)
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			// Not JSON: the SDK fails the connection on it; stop counting, and unblock the
			// writes of Read.
			pr.CloseWithError(err)
			return
		}
		calls, _ := classify(raw)
		r.d.add(calls, 0)
	}
}

// drainWriter passes the SDK's messages to stdout and counts the answers among them. The
// SDK writes one message (or batch) a Write.
type drainWriter struct {
	d *drain
	w io.WriteCloser
}

func (w *drainWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	if err == nil {
		answers := 0
		dec := json.NewDecoder(bytes.NewReader(p))
		for {
			var raw json.RawMessage
			if dec.Decode(&raw) != nil {
				break
			}
			_, a := classify(raw)
			answers += a
		}
		w.d.add(0, answers)
	}
	return n, err
}

func (w *drainWriter) Close() error { return w.w.Close() }

// classify counts the calls (a method and an id) and the answers (a result or an error, no
// method) in one JSON-RPC message or batch.
func classify(raw json.RawMessage) (calls, answers int) {
	var msgs []json.RawMessage
	if t := bytes.TrimLeft(raw, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		if json.Unmarshal(raw, &msgs) != nil {
			return 0, 0
		}
	} else {
		msgs = []json.RawMessage{raw}
	}
	for _, m := range msgs {
		var f struct {
			ID     json.RawMessage `json:"id"`
			Method *string         `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(m, &f) != nil {
			continue
		}
		switch {
		case f.Method != nil && len(f.ID) > 0 && string(f.ID) != "null":
			calls++
		case f.Method == nil && (f.Result != nil || f.Error != nil):
			answers++
		}
	}
	return calls, answers
}
