package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/eval"
	"github.com/salience-ai/salience/internal/app"
	"github.com/salience-ai/salience/models"
)

// `salience-bench soak` runs a server under steady mixed traffic for a while and checks that it
// holds: no 5xx, a bounded WAL, and no memory growth once warm. The corpus is kept at a
// steady size (each client deletes its oldest memory once it holds --window of them), so
// the in-memory indexes stop growing after the preload and a rising RSS means a leak, not
// more data.

// soakOptions are the flags of `salience-bench soak`.
type soakOptions struct {
	duration  time.Duration
	clients   int
	preload   int
	window    int
	data      string
	maxWALMB  float64
	maxGrowth float64
	inProcess bool
	seed      uint64
	gogc      string
	warmup    time.Duration
	heapProf  string
	salience  string // the server binary to spawn
}

// Routes of the soak's traffic, in the order they are printed.
var soakRoutes = []string{"ingest", "delete", "recall", "engagement"}

const soakNS = "soak"

func runSoak(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o soakOptions
	fs := flag.NewFlagSet("salience-bench soak", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.DurationVar(&o.duration, "duration", 20*time.Second, "how long the traffic runs")
	fs.IntVar(&o.clients, "clients", 4, "concurrent clients, each mixing ingest, recall and engagement")
	fs.IntVar(&o.preload, "preload", 2000, "memories stored before the clock starts")
	fs.IntVar(&o.window, "window", 250, "memories each client keeps; past it, every ingest deletes the client's oldest")
	fs.StringVar(&o.data, "data", "", "data directory of the server (default: a temporary one, removed afterwards)")
	fs.Float64Var(&o.maxWALMB, "max-wal-mb", 64, "fail when the WAL file exceeds this many MB at any sample")
	fs.Float64Var(&o.maxGrowth, "max-rss-growth", 1.10, "fail when RSS at the end exceeds this factor of RSS after the first third")
	fs.BoolVar(&o.inProcess, "in-process", false, "run the server inside this process instead of spawning `salience serve` (RSS then includes the clients)")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the synthetic traffic")
	// Caches fill in the first seconds of traffic, and count as growth if measured: SQLite's
	// page cache, up to 2 MB for each of the store's six connections, lives outside the Go
	// heap (modernc's allocator). Measured in process on 45 s of traffic: the live Go heap
	// after a collection went 27.8 → 26.2 MB from the first third to the end while RSS
	// went 99.9 → 112.5 MB, the caches filling.
	fs.DurationVar(&o.warmup, "warmup", 10*time.Second, "traffic before the clock starts, not counted")
	// RSS tracks the live heap only when the collector runs often enough. At the server's
	// own default (GOGC=400, set in main for the 100k-memory latency), the heap may grow to
	// five times what is live before a collection, so over a minute RSS climbs with no leak:
	// measured on the 60 s, 4-client soak, ×1.145 at GOGC=400 against ×1.002 at GOGC=100.
	fs.StringVar(&o.heapProf, "heapprofile", "", "with --in-process: write heap profiles, after a collection, to FILE.third when the first third is over and FILE.end at the end (compare them with go tool pprof -base FILE.third FILE.end)")
	fs.StringVar(&o.salience, "salience", "", "the salience binary to spawn (default: salience beside this binary, else on PATH)")
	fs.StringVar(&o.gogc, "gogc", "100", "GOGC of the spawned server, so RSS follows live memory; empty keeps the server's default (400)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("soak: unexpected arguments %q", fs.Args())
	case o.heapProf != "" && !o.inProcess:
		return errors.New("soak: --heapprofile needs --in-process: the profile is of this process's heap")
	case o.duration <= 0 || o.warmup < 0 || o.clients < 1 || o.preload < 0 || o.window < 1 || o.maxWALMB <= 0 || o.maxGrowth < 1:
		return errors.New("soak: --duration, --clients, --window and --max-wal-mb must be positive, --preload not negative, --max-rss-growth at least 1")
	}
	if o.data == "" {
		dir, err := os.MkdirTemp("", "salience-soak-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		o.data = dir
	}
	srv, err := startSoakServer(ctx, &o, stderr)
	if err != nil {
		return err
	}
	defer srv.stop()
	rep, err := soak(ctx, &o, srv)
	if err != nil {
		return err
	}
	rep.print(stdout, &o, srv)
	if failures := rep.check(&o); len(failures) > 0 {
		return fmt.Errorf("soak failed: %s", strings.Join(failures, "; "))
	}
	fmt.Fprintln(stdout, "soak: ok")
	return nil
}

// soakServer is the server under test: a spawned `salience serve` or one in this process.
type soakServer struct {
	base string
	pid  int
	wal  string // path of the WAL file
	stop func()
	desc string
	logs *tailBuffer
}

// startSoakServer starts the server on a free loopback port and waits until it is ready.
func startSoakServer(ctx context.Context, o *soakOptions, stderr io.Writer) (*soakServer, error) {
	s := &soakServer{wal: filepath.Join(o.data, app.DatabaseFile+"-wal"), logs: &tailBuffer{max: 64 << 10}}
	if o.inProcess {
		m := app.NewMain()
		m.Stdout, m.Stderr = io.Discard, s.logs
		m.Getenv = func(string) string { return "" }
		if err := m.ParseFlags(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data", o.data, "--log-level", "warn"}); err != nil {
			return nil, err
		}
		if err := m.Run(ctx); err != nil {
			return nil, err
		}
		s.base, s.pid, s.desc = "http://"+m.Addr(), os.Getpid(), "in process"
		s.stop = func() { m.Close() }
	} else {
		exe, err := serverBinary(o.salience)
		if err != nil {
			return nil, err
		}
		addr, err := freeLoopbackAddr()
		if err != nil {
			return nil, err
		}
		cmd := exec.Command(exe, "serve", "--addr", addr, "--data", o.data, "--log-level", "warn")
		cmd.Stdout, cmd.Stderr = s.logs, s.logs
		cmd.Env = append(os.Environ(), "SALIENCE_KEYS=") // loopback, no keys
		if o.gogc != "" {
			cmd.Env = append(cmd.Env, "GOGC="+o.gogc)
		}
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("soak: starting %s serve: %w", exe, err)
		}
		s.base, s.pid, s.desc = "http://"+addr, cmd.Process.Pid, "spawned, GOGC="+o.gogc
		if o.gogc == "" {
			s.desc = "spawned, the server's default GOGC"
		}
		s.stop = func() {
			_ = cmd.Process.Signal(os.Interrupt)
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		res, err := http.Get(s.base + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			s.stop()
			return nil, fmt.Errorf("soak: the server did not get ready; its log:\n%s", s.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// soakReport is what a soak measured.
type soakReport struct {
	routes                 map[string]*routeStats
	rssStart, rssThird     float64 // MB
	rssEnd                 float64
	rssParts               string  // the end's RSS by kind (anon, file, shmem): tells heap growth from mapped files
	walStart, walEnd       float64 // MB
	walMax                 float64
	elapsed                time.Duration
	finalStatus            int // of a last listing after the traffic, proving the store still reads
	finalTotal, finalLimit int
}

// routeStats are one route's counts and latencies.
type routeStats struct {
	mu       sync.Mutex
	n        int
	errors   int // any status other than the route's success, or no response
	server   int // 5xx
	lat      []time.Duration
	firstErr string
}

func (r *routeStats) add(d time.Duration, status int, errText string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	r.lat = append(r.lat, d)
	if errText != "" {
		r.errors++
		if status >= 500 {
			r.server++
		}
		if r.firstErr == "" {
			r.firstErr = errText
		}
	}
}

// soak preloads the corpus, runs the clients for the duration and samples RSS and the WAL.
func soak(ctx context.Context, o *soakOptions, srv *soakServer) (*soakReport, error) {
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: o.clients + 2}}
	syn := eval.NewSynth(o.seed)
	now := time.Now().UTC()
	for i := 0; i < o.preload; i += 500 {
		var req api.CreateMemoriesRequest
		for j := i; j < min(i+500, o.preload); j++ {
			req.Memories = append(req.Memories, soakMemory(syn, j, now))
		}
		if _, status, err := soakPost(ctx, client, srv.base+"/v1/namespaces/"+soakNS+"/memories", req, nil); err != nil || status != http.StatusCreated {
			return nil, fmt.Errorf("soak: preload: status %d, %v", status, err)
		}
	}

	rep := &soakReport{routes: map[string]*routeStats{}}
	for _, r := range soakRoutes {
		rep.routes[r] = &routeStats{}
	}
	// Each client stores its window before the clock starts, so that from the first request
	// every ingest is matched by a delete and the corpus stays the same size.
	clients := make([]*soakClient, o.clients)
	for c := range clients {
		cl := &soakClient{id: c, base: srv.base, http: client, rep: rep, window: o.window,
			syn: eval.NewSynth(o.seed + uint64(c) + 1), rng: rand.New(rand.NewPCG(o.seed, uint64(c)))}
		if err := cl.fill(ctx); err != nil {
			return nil, err
		}
		clients[c] = cl
	}
	if o.warmup > 0 {
		warm := &soakReport{routes: map[string]*routeStats{}}
		for _, r := range soakRoutes {
			warm.routes[r] = &routeStats{}
		}
		runClients(ctx, clients, warm, o.warmup)
		if fives := warm.fives(); fives > 0 {
			return nil, fmt.Errorf("soak: %d responses were 5xx during the warm-up", fives)
		}
	}
	rep.rssStart, rep.walStart = rssMB(srv.pid), fileMB(srv.wal)
	rep.walMax = rep.walStart

	runCtx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	for _, cl := range clients {
		cl.rep = rep
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl.run(runCtx)
		}()
	}
	// Sample the WAL every 250 ms and RSS once the first third is over.
	tick := time.NewTicker(250 * time.Millisecond)
	third := time.After(o.duration / 3)
sampling:
	for {
		select {
		case <-runCtx.Done():
			break sampling
		case <-third:
			rep.rssThird = rssMB(srv.pid)
			if err := heapProfile(o.heapProf, ".third"); err != nil {
				return nil, err
			}
		case <-tick.C:
			rep.walMax = max(rep.walMax, fileMB(srv.wal))
		}
	}
	tick.Stop()
	wg.Wait()
	rep.elapsed = time.Since(start)
	rep.rssEnd, rep.walEnd, rep.rssParts = rssMB(srv.pid), fileMB(srv.wal), rssBreakdown(srv.pid)
	if err := heapProfile(o.heapProf, ".end"); err != nil {
		return nil, err
	}
	rep.walMax = max(rep.walMax, rep.walEnd)

	// The store still answers, and holds about the steady-state corpus.
	var list api.ListMemoriesResponse
	rep.finalLimit = 1
	if res, err := client.Get(srv.base + "/v1/namespaces/" + soakNS + "/memories?limit=1"); err == nil {
		rep.finalStatus = res.StatusCode
		_ = json.NewDecoder(res.Body).Decode(&list)
		res.Body.Close()
		rep.finalTotal = list.Total
	}
	return rep, nil
}

// heapProfile writes this process's heap profile, after a collection so that it shows what
// is live, to path+suffix; nothing when path is empty.
func heapProfile(path, suffix string) error {
	if path == "" {
		return nil
	}
	runtime.GC()
	if err := writeProfile("heap", path+suffix); err != nil {
		return fmt.Errorf("soak: heap profile: %w", err)
	}
	return nil
}

// runClients runs the clients for d, recording into rep.
func runClients(ctx context.Context, clients []*soakClient, rep *soakReport, d time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var wg sync.WaitGroup
	for _, cl := range clients {
		cl.rep = rep
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl.run(ctx)
		}()
	}
	wg.Wait()
}

func (r *soakReport) fives() int {
	n := 0
	for _, st := range r.routes {
		n += st.server
	}
	return n
}

// soakMemory is a synthetic turn in wire form.
func soakMemory(syn *eval.Synth, i int, now time.Time) api.MemoryInput {
	m := syn.Memory(i, now)
	return api.MemoryInput{Kind: string(m.Kind), Content: m.Content, CreatedAt: m.CreatedAt,
		Source: &api.Source{ConversationID: m.Source.ConversationID, Speaker: m.Source.Speaker}}
}

// soakClient is one client's loop: it mixes the routes as a bot does — store a turn, recall
// before a reply, report what it did with what it was shown — and keeps its own memories
// within the window.
type soakClient struct {
	id     int
	base   string
	http   *http.Client
	rep    *soakReport
	syn    *eval.Synth
	rng    *rand.Rand
	window int

	mine     []string // ids of this client's memories, oldest first
	shown    []string // surfacing ids of the latest recall, not reported yet
	seq      int
	turn     int
	conv     string
	convTurn int
}

func (c *soakClient) run(ctx context.Context) {
	for ctx.Err() == nil {
		switch p := c.rng.IntN(10); {
		case p < 3:
			c.ingest(ctx)
		case p < 8:
			c.recall(ctx)
		default:
			c.engage(ctx)
		}
	}
}

// fill stores the client's window of memories in batches.
func (c *soakClient) fill(ctx context.Context) error {
	for len(c.mine) < c.window {
		var req api.CreateMemoriesRequest
		for range min(500, c.window-len(c.mine)) {
			c.seq++
			in := soakMemory(c.syn, c.seq, time.Now().UTC())
			in.Source.ConversationID = fmt.Sprintf("soak-%d-%d", c.id, c.seq/40)
			req.Memories = append(req.Memories, in)
		}
		var out api.CreateMemoriesResponse
		if _, status, err := soakPost(ctx, c.http, c.url("/memories"), req, &out); err != nil || status != http.StatusCreated {
			return fmt.Errorf("soak: client %d storing its window: status %d, %v", c.id, status, err)
		}
		for _, m := range out.Memories {
			c.mine = append(c.mine, m.ID)
		}
	}
	return nil
}

func (c *soakClient) url(path string) string { return c.base + "/v1/namespaces/" + soakNS + path }

func (c *soakClient) ingest(ctx context.Context) {
	c.seq++
	in := soakMemory(c.syn, c.seq, time.Now().UTC())
	in.Source.ConversationID = fmt.Sprintf("soak-%d-%d", c.id, c.seq/40)
	var out api.CreateMemoriesResponse
	if c.call(ctx, "ingest", http.MethodPost, c.url("/memories"), in, &out, http.StatusCreated) && len(out.Memories) == 1 {
		c.mine = append(c.mine, out.Memories[0].ID)
	}
	for len(c.mine) > c.window {
		id := c.mine[0]
		c.mine = c.mine[1:]
		c.call(ctx, "delete", http.MethodDelete, c.url("/memories/"+id), nil, nil, http.StatusNoContent)
	}
}

func (c *soakClient) recall(ctx context.Context) {
	if c.convTurn == 0 || c.convTurn > 30 {
		c.turn++
		c.conv, c.convTurn = fmt.Sprintf("soak-chat-%d-%d", c.id, c.turn), 0
	}
	c.convTurn++
	mode := "ambient"
	if c.rng.IntN(3) == 0 {
		mode = "search"
	}
	req := api.RecallRequest{ConversationID: c.conv, Mode: mode, Query: c.syn.Query(), Limit: 8, Rerank: "off"}
	var out api.RecallResponse
	if c.call(ctx, "recall", http.MethodPost, c.url("/recall"), req, &out, http.StatusOK) {
		c.shown = c.shown[:0]
		for _, r := range out.Results {
			if r.SurfacingID != "" {
				c.shown = append(c.shown, r.SurfacingID)
			}
		}
	}
}

var soakEventTypes = []string{"used", "helpful", "ignored", "dismissed"}

func (c *soakClient) engage(ctx context.Context) {
	if len(c.shown) == 0 {
		c.recall(ctx)
		return
	}
	var req api.EngagementRequest
	for _, sid := range c.shown {
		c.seq++
		req.Events = append(req.Events, api.EngagementEvent{ID: fmt.Sprintf("soak-%d-%d", c.id, c.seq),
			SurfacingID: sid, Type: soakEventTypes[c.rng.IntN(len(soakEventTypes))]})
	}
	c.shown = c.shown[:0]
	c.call(ctx, "engagement", http.MethodPost, c.url("/engagement"), req, nil, http.StatusOK)
}

// call sends one request and records it under route. A request cut short by the end of the
// run is not counted. It reports whether the answer was the expected status (and, when out
// is given, decoded into it).
func (c *soakClient) call(ctx context.Context, route, method, url string, body, out any, want int) bool {
	start := time.Now()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			panic(err) // the api types always marshal
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		panic(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := c.http.Do(req)
	if ctx.Err() != nil {
		if err == nil {
			res.Body.Close()
		}
		return false
	}
	st := c.rep.routes[route]
	if err != nil {
		st.add(time.Since(start), 0, err.Error())
		return false
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	d := time.Since(start)
	switch {
	case err != nil && ctx.Err() != nil:
		return false // the run ended while the answer was read: not the server's error
	case err != nil:
		st.add(d, res.StatusCode, "reading the body: "+err.Error())
		return false
	case res.StatusCode != want:
		st.add(d, res.StatusCode, fmt.Sprintf("%s %s: %d %s", method, strings.TrimPrefix(url, c.base), res.StatusCode, bytes.TrimSpace(data)))
		return false
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			st.add(d, res.StatusCode, "decoding the answer: "+err.Error())
			return false
		}
	}
	st.add(d, res.StatusCode, "")
	return true
}

func soakPost(ctx context.Context, client *http.Client, url string, body, out any) ([]byte, int, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err == nil && out != nil {
		err = json.Unmarshal(data, out)
	}
	return data, res.StatusCode, err
}

func (r *soakReport) print(w io.Writer, o *soakOptions, srv *soakServer) {
	fmt.Fprintf(w, "soak: %s after %s of warm-up, %d clients, server pid %d (%s), %d memories preloaded, window %d per client\n",
		r.elapsed.Round(time.Millisecond), o.warmup, o.clients, srv.pid, srv.desc, o.preload, o.window)
	fmt.Fprintf(w, "%-12s %9s %8s %6s %9s %9s\n", "route", "requests", "errors", "5xx", "p50_ms", "p95_ms")
	total, errs, fives := 0, 0, 0
	for _, name := range soakRoutes {
		st := r.routes[name]
		pct := percentiles(slices.Clone(st.lat))
		p50, p95 := 0.0, 0.0
		if len(st.lat) > 0 {
			p50, p95 = pct(0.50), pct(0.95)
		}
		fmt.Fprintf(w, "%-12s %9d %8d %6d %9.2f %9.2f\n", name, st.n, st.errors, st.server, p50, p95)
		total, errs, fives = total+st.n, errs+st.errors, fives+st.server
	}
	fmt.Fprintf(w, "%-12s %9d %8d %6d   (%.0f requests/s)\n", "total", total, errs, fives, float64(total)/r.elapsed.Seconds())
	for _, name := range soakRoutes {
		if e := r.routes[name].firstErr; e != "" {
			fmt.Fprintf(w, "first %s error: %s\n", name, clipLine(e, 300))
		}
	}
	growth := 0.0
	if r.rssThird > 0 {
		growth = r.rssEnd / r.rssThird
	}
	fmt.Fprintf(w, "rss: start %.1f MB, after the first third %.1f MB, end %.1f MB (end / third %.3f, limit %.2f)\n",
		r.rssStart, r.rssThird, r.rssEnd, growth, o.maxGrowth)
	if r.rssParts != "" {
		fmt.Fprintf(w, "rss at the end by kind: %s\n", r.rssParts)
	}
	fmt.Fprintf(w, "wal: start %.1f MB, end %.1f MB, max %.1f MB (limit %.0f MB)\n", r.walStart, r.walEnd, r.walMax, o.maxWALMB)
	fmt.Fprintf(w, "store after the run: GET memories %d, %d memories\n", r.finalStatus, r.finalTotal)
}

// check returns what failed: a 5xx, a WAL over its bound, RSS growth past the first third, or
// a store that no longer answers.
func (r *soakReport) check(o *soakOptions) []string {
	var out []string
	if fives := r.fives(); fives > 0 {
		out = append(out, fmt.Sprintf("%d responses were 5xx", fives))
	}
	if r.walMax > o.maxWALMB {
		out = append(out, fmt.Sprintf("the WAL reached %.1f MB, over %.0f MB", r.walMax, o.maxWALMB))
	}
	switch {
	case r.rssThird <= 0 || r.rssEnd <= 0:
		out = append(out, "RSS could not be read (/proc/PID/status)")
	case r.rssEnd > o.maxGrowth*r.rssThird:
		out = append(out, fmt.Sprintf("RSS grew from %.1f MB after the first third to %.1f MB, over ×%.2f", r.rssThird, r.rssEnd, o.maxGrowth))
	}
	if r.finalStatus != http.StatusOK {
		out = append(out, fmt.Sprintf("listing memories after the run answered %d", r.finalStatus))
	}
	return out
}

// rssMB reads a process's resident set size from /proc (Linux), in MB; 0 when unknown.
func rssMB(pid int) float64 { return procStatusMB(pid)["VmRSS"] }

// rssBreakdown says how the resident set splits: anonymous memory (the Go heap, SQLite's
// page cache) against mapped files and shared memory (SQLite's WAL index).
func rssBreakdown(pid int) string {
	st := procStatusMB(pid)
	if len(st) == 0 {
		return ""
	}
	return fmt.Sprintf("anon %.1f MB, file %.1f MB, shmem %.1f MB", st["RssAnon"], st["RssFile"], st["RssShmem"])
}

// procStatusMB reads the kB fields of /proc/PID/status, in MB.
func procStatusMB(pid int) map[string]float64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return nil
	}
	defer f.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		v, isKB := strings.CutSuffix(strings.TrimSpace(v), " kB")
		if !ok || !isKB {
			continue
		}
		if kb, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
			out[k] = kb / 1024
		}
	}
	return out
}

// fileMB is a file's size in MB, 0 when it does not exist.
func fileMB(path string) float64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return float64(fi.Size()) / (1 << 20)
}

// clipLine puts s on one line and cuts it to n bytes with models.Clip (never mid-rune).
func clipLine(s string, n int) string {
	return models.Clip(strings.ReplaceAll(s, "\n", " "), n)
}

// tailBuffer keeps the last max bytes written to it: the server's log, shown when it fails.
type tailBuffer struct {
	mu  sync.Mutex
	b   []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// serverBinary is the salience binary soak spawns: the one named, else the one beside this
// binary (make builds both into bin/), else salience on PATH.
func serverBinary(named string) (string, error) {
	if named != "" {
		return named, nil
	}
	if self, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(self), "salience")
		if runtime.GOOS == "windows" {
			beside += ".exe"
		}
		if _, err := os.Stat(beside); err == nil {
			return beside, nil
		}
	}
	p, err := exec.LookPath("salience")
	if err != nil {
		return "", errors.New("soak: no salience binary beside salience-bench or on PATH; build it (make build) or give --salience PATH, or run with --in-process")
	}
	return p, nil
}
