package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/salience-ai/salience/api"
)

// These tests build the real binary and run it as a user would.

var (
	binOnce sync.Once
	binPath string
	binErr  error
	binDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// binary builds cmd/salience once per test run.
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "salience-bin-")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "salience")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

var listeningRE = regexp.MustCompile(`listening on (\S+)`)

// process is a running salience binary.
type process struct {
	cmd  *exec.Cmd
	base string
	logs *syncBuffer
}

// startBinary runs `salience serve` on dataDir and port 0, reads the address it logs, and
// waits for /readyz.
func startBinary(t *testing.T, bin, dataDir string) *process {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--data", dataDir)
	cmd.Env = append(os.Environ(), "SALIENCE_KEYS=") // never pick up a developer's keys
	p := &process{cmd: cmd, logs: &syncBuffer{}}
	addr := make(chan string, 1)
	// An io.Writer rather than a pipe: Wait then returns only after all output is copied.
	cmd.Stdout = &addrWriter{buf: p.logs, addr: addr}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
		if t.Failed() {
			t.Logf("binary log:\n%s", p.logs)
		}
	})
	select {
	case a := <-addr:
		p.base = "http://" + a
	case <-time.After(30 * time.Second):
		t.Fatalf("the binary did not report its address\n%s", p.logs)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get(p.base + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the binary is not ready\n%s", p.logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestKill9LosesNoAcknowledgedWrite streams ingests from several goroutines, kills the
// server with SIGKILL mid-stream, restarts it on the same data directory and checks that
// every memory whose creation was acknowledged (201) is there, batches whole.
func TestKill9LosesNoAcknowledgedWrite(t *testing.T) {
	bin := binary(t)
	dir := t.TempDir()
	p := startBinary(t, bin, dir)

	type acked struct{ id, content string }
	var (
		mu    sync.Mutex
		ackd  []acked
		wg    sync.WaitGroup
		ctx   context.Context
		stop  context.CancelFunc
		count = make(chan struct{}, 1<<16)
	)
	ctx, stop = context.WithCancel(context.Background())
	defer stop()
	client := &http.Client{Timeout: 10 * time.Second}
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				// Writers 0 and 1 send single memories, 2 and 3 batches of five.
				var body []byte
				var contents []string
				if w < 2 {
					c := fmt.Sprintf("writer %d memory %d: the heron came back to the pond", w, i)
					contents = []string{c}
					body, _ = json.Marshal(api.MemoryInput{Kind: "fact", Content: c})
				} else {
					var req api.CreateMemoriesRequest
					for j := range 5 {
						c := fmt.Sprintf("writer %d batch %d item %d: the tide table for the harbour", w, i, j)
						contents = append(contents, c)
						req.Memories = append(req.Memories, api.MemoryInput{Kind: "turn", Content: c, Source: &api.Source{ConversationID: fmt.Sprintf("w%d", w)}})
					}
					body, _ = json.Marshal(req)
				}
				req, _ := http.NewRequestWithContext(ctx, "POST", p.base+"/v1/namespaces/durable/memories", strings.NewReader(string(body)))
				req.Header.Set("Content-Type", "application/json")
				res, err := client.Do(req)
				if err != nil {
					return // the server is gone
				}
				var out api.CreateMemoriesResponse
				err = json.NewDecoder(res.Body).Decode(&out)
				res.Body.Close()
				if err != nil || res.StatusCode != http.StatusCreated {
					continue // not acknowledged: nothing to check
				}
				mu.Lock()
				for k, m := range out.Memories {
					ackd = append(ackd, acked{m.ID, contents[k]})
				}
				mu.Unlock()
				count <- struct{}{}
			}
		}()
	}
	// Kill once a good number of writes were acknowledged, while writers are mid-request.
	deadline := time.After(60 * time.Second)
	for n := 0; n < 150; n++ {
		select {
		case <-count:
		case <-deadline:
			t.Fatalf("only %d writes acknowledged in 60 s", n)
		}
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := p.cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the server did not die of SIGKILL: %v", err)
	}
	wg.Wait()
	stop()

	mu.Lock()
	want := append([]acked(nil), ackd...)
	mu.Unlock()
	t.Logf("%d memories acknowledged before SIGKILL", len(want))

	p2 := startBinary(t, bin, dir)
	for _, a := range want {
		res, err := client.Get(p2.base + "/v1/namespaces/durable/memories/" + a.id)
		if err != nil {
			t.Fatal(err)
		}
		var m api.Memory
		err = json.NewDecoder(res.Body).Decode(&m)
		res.Body.Close()
		if res.StatusCode != 200 || err != nil || m.Content != a.content {
			t.Errorf("acknowledged memory %s lost after SIGKILL: %d %q", a.id, res.StatusCode, m.Content)
		}
	}
	res, err := client.Get(p2.base + "/v1/namespaces/durable/memories?limit=1")
	if err != nil {
		t.Fatal(err)
	}
	var list api.ListMemoriesResponse
	json.NewDecoder(res.Body).Decode(&list)
	res.Body.Close()
	if list.Total < len(want) {
		t.Errorf("after restart the namespace holds %d memories, fewer than the %d acknowledged", list.Total, len(want))
	}
}

// TestKill9KeepsReturnedSurfacings runs recalls from several goroutines (their surfacings
// share group commits), kills the server with SIGKILL mid-stream, restarts it and checks
// that engagement finds every surfacing id a recall returned before the kill.
func TestKill9KeepsReturnedSurfacings(t *testing.T) {
	bin := binary(t)
	dir := t.TempDir()
	p := startBinary(t, bin, dir)
	client := &http.Client{Timeout: 10 * time.Second}
	post := func(base, path string, in, out any) int {
		t.Helper()
		body, _ := json.Marshal(in)
		res, err := client.Post(base+path, "application/json", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if out != nil {
			if err := json.NewDecoder(res.Body).Decode(out); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
		}
		return res.StatusCode
	}
	var seed api.CreateMemoriesRequest
	for i := range 40 {
		seed.Memories = append(seed.Memories, api.MemoryInput{Kind: "fact",
			Content: fmt.Sprintf("fact %d: the heron nests by the pond near the harbour tide table", i)})
	}
	if code := post(p.base, "/v1/namespaces/durable/memories", seed, nil); code != http.StatusCreated {
		t.Fatalf("seeding: %d", code)
	}

	var (
		mu    sync.Mutex
		ids   []string
		wg    sync.WaitGroup
		count = make(chan struct{}, 1<<16)
	)
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				body, _ := json.Marshal(api.RecallRequest{Mode: "search", Query: "heron pond harbour tide", Limit: 5,
					ConversationID: fmt.Sprintf("c%d", w), TurnID: fmt.Sprintf("w%d-t%d", w, i)})
				res, err := client.Post(p.base+"/v1/namespaces/durable/recall", "application/json", strings.NewReader(string(body)))
				if err != nil {
					return // the server is gone
				}
				var out api.RecallResponse
				err = json.NewDecoder(res.Body).Decode(&out)
				res.Body.Close()
				if err != nil || res.StatusCode != http.StatusOK {
					continue // not returned: nothing to check
				}
				mu.Lock()
				for _, r := range out.Results {
					if r.SurfacingID != "" {
						ids = append(ids, r.SurfacingID)
					}
				}
				mu.Unlock()
				count <- struct{}{}
			}
		})
	}
	deadline := time.After(60 * time.Second)
	for n := 0; n < 150; n++ {
		select {
		case <-count:
		case <-deadline:
			t.Fatalf("only %d recalls answered in 60 s", n)
		}
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := p.cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the server did not die of SIGKILL: %v", err)
	}
	wg.Wait()
	mu.Lock()
	want := append([]string(nil), ids...)
	mu.Unlock()
	if len(want) < 150 {
		t.Fatalf("only %d surfacing ids returned before SIGKILL", len(want))
	}
	t.Logf("%d surfacing ids returned before SIGKILL", len(want))

	p2 := startBinary(t, bin, dir)
	for part := range slices.Chunk(want, 1000) {
		var req api.EngagementRequest
		for _, id := range part {
			req.Events = append(req.Events, api.EngagementEvent{ID: "e-" + id, SurfacingID: id, Type: "used"})
		}
		var out api.EngagementResponse
		if code := post(p2.base, "/v1/namespaces/durable/engagement", req, &out); code != http.StatusOK {
			t.Fatalf("engagement: %d", code)
		}
		for i, r := range out.Results {
			if r.Status != "applied" {
				t.Errorf("surfacing %s returned before SIGKILL: engagement says %s %+v", part[i], r.Status, r.Error)
			}
		}
	}
}

// TestBinaryRefusesOpenAddressWithoutKeys is the user's view of the loopback rule: the
// process exits non-zero at once and says why.
func TestBinaryRefusesOpenAddressWithoutKeys(t *testing.T) {
	bin := binary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "serve", "--addr", "0.0.0.0:0", "--data", t.TempDir())
	cmd.Env = append(os.Environ(), "SALIENCE_KEYS=")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitUsage {
		t.Fatalf("exit = %v, want code %d\n%s", err, exitUsage, out)
	}
	for _, want := range []string{"loopback", "--keys", "0.0.0.0:0"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q: %s", want, out)
		}
	}
}

// TestBinaryShutsDownOnSIGTERM checks the graceful path of the real process.
func TestBinaryShutsDownOnSIGTERM(t *testing.T) {
	bin := binary(t)
	p := startBinary(t, bin, t.TempDir())
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no exit 20 s after SIGTERM")
	}
	time.Sleep(50 * time.Millisecond) // let the log reader drain
	if !strings.Contains(p.logs.String(), "stopped") {
		t.Errorf("no orderly stop in the log:\n%s", p.logs)
	}
}

// addrWriter keeps the process's output and reports the first address it logs.
type addrWriter struct {
	buf   *syncBuffer
	addr  chan string
	found bool
}

func (w *addrWriter) Write(b []byte) (int, error) {
	n, err := w.buf.Write(b)
	if !w.found {
		if m := listeningRE.FindStringSubmatch(w.buf.String()); m != nil {
			w.found = true
			w.addr <- m[1]
		}
	}
	return n, err
}

// TestBinaryRefusesAnotherEmbeddersData is the user's view of the embedder check: over a
// namespace another model of the same size embedded, the process exits non-zero at once,
// naming both embedders.
func TestBinaryRefusesAnotherEmbeddersData(t *testing.T) {
	bin := binary(t)
	dir := t.TempDir()
	seedStore(t, dir, fakeStatic, "bees")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "serve", "--addr", "127.0.0.1:0", "--data", dir)
	cmd.Env = append(os.Environ(), "SALIENCE_EMBEDDER=")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitError {
		t.Fatalf("exit = %v, want code %d\n%s", err, exitError, out)
	}
	for _, want := range []string{"static-fake-256-v1", "configured embedder is " + defaultEmbedder(t).Name(), "salience reembed --ns bees"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q: %s", want, out)
		}
	}
}
