// Package client is the Go client of Salience's HTTP API, for bots: store what a bot lives
// through, recall before each reply, report what it used.
//
//	c, err := client.New("http://127.0.0.1:7700", client.WithKey(os.Getenv("SALIENCE_API_KEY")))
//	ns := c.Namespace("my-bot")
//	res, err := ns.Recall(ctx, api.RecallRequest{ConversationID: "c1", Query: userMessage})
//
// It speaks the wire types of package api and imports nothing of the server (a test keeps
// gin and the store out of its import graph). Every call takes a context whose deadline
// bounds the whole call, retries included. Calls that are idempotent are retried on
// connection failures and on 502/503/504 (honouring Retry-After): every GET but Ready (which
// WaitReady polls itself), deleting a memory, engagement reports (their event ids make a
// repeat a no-op), PutSettings and PatchSettings (the same write or merge patch again changes
// nothing), Relearn (a rebuild from the same event log) and StopExperiment. Storing memories,
// recall, creating an experiment and triggering a job never are, since a repeat would store,
// surface, create or run twice. A server error is an *Error carrying the server's code,
// message and field.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Defaults of the options.
const (
	// DefaultTimeout bounds a call whose context has no deadline.
	DefaultTimeout = 30 * time.Second
	// DefaultRetries is how many times an idempotent call is repeated after a retryable
	// failure.
	DefaultRetries = 2
	// DefaultBackoff is the first wait between attempts; it doubles each attempt.
	DefaultBackoff = 100 * time.Millisecond
	// maxBackoff caps one wait, Retry-After included: a server asking for minutes is better
	// answered by an error the caller can act on than by a hung call.
	maxBackoff = 10 * time.Second
	// maxResponseBytes bounds what the client reads of a response: the largest answers (a
	// page of 1,000 memories of 64 KiB) stay well under it.
	maxResponseBytes = 256 << 20
)

// Client calls one Salience server. It is safe for concurrent use.
type Client struct {
	base      string // scheme://host[:port][/prefix], no trailing slash
	key       string
	hc        *http.Client
	timeout   time.Duration
	retries   int
	backoff   time.Duration
	userAgent string
	rand      func() float64 // jitter source in [0, 1)
	sleep     func(context.Context, time.Duration) error
}

// Option configures a Client.
type Option func(*Client)

// WithKey sends key as the bearer API key of every request. An empty key sends none (a
// server without a keys file needs none).
func WithKey(key string) Option { return func(c *Client) { c.key = key } }

// WithHTTPClient uses hc for requests (its Transport, proxies, TLS configuration). Its
// Timeout, when set, applies to each attempt; the context's deadline to the whole call.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) {
		if hc != nil {
			c.hc = hc
		}
	}
}

// WithTimeout bounds each call whose context has no deadline (DefaultTimeout when not
// given); 0 leaves such calls unbounded.
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// WithRetries sets how many times an idempotent call is repeated after a retryable failure
// (0 disables retries) and the first wait, which doubles each attempt, with jitter.
func WithRetries(n int, backoff time.Duration) Option {
	return func(c *Client) { c.retries, c.backoff = max(n, 0), max(backoff, 0) }
}

// WithUserAgent sets the User-Agent header, so the server's access log names the bot.
func WithUserAgent(ua string) Option { return func(c *Client) { c.userAgent = ua } }

// New returns a client of the server at baseURL ("http://127.0.0.1:7700"; a path prefix is
// kept, for a server behind a proxy that mounts it under one).
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("client: base URL %q: %w", baseURL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: base URL %q must be http:// or https:// with a host", baseURL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("client: base URL %q must have no query or fragment", baseURL)
	}
	c := &Client{
		base:      strings.TrimRight(u.String(), "/"),
		hc:        http.DefaultClient,
		timeout:   DefaultTimeout,
		retries:   DefaultRetries,
		backoff:   DefaultBackoff,
		userAgent: "salience-go-client",
		rand:      rand.Float64,
		sleep:     sleepCtx,
	}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// call is one API call: the route, its path parameters in the order of the template, the
// query, and the JSON body (nil for none).
type call struct {
	route  route
	params []string
	query  url.Values
	body   any
	// idempotent calls are retried; see the package comment.
	idempotent bool
}

// do runs a call and decodes a 2xx body into out (when out is not nil). A non-2xx answer
// is an *Error.
func (c *Client) do(ctx context.Context, cl call, out any) error {
	if c.timeout > 0 {
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, c.timeout)
			defer cancel()
		}
	}
	u := c.base + cl.route.expand(cl.params...)
	if len(cl.query) > 0 {
		u += "?" + cl.query.Encode()
	}
	// The body is marshalled once, so every attempt sends the same bytes.
	var body []byte
	if cl.body != nil {
		var err error
		if body, err = json.Marshal(cl.body); err != nil {
			return fmt.Errorf("client: encoding the %s body: %w", cl.route, err)
		}
	}
	attempts := 1
	if cl.idempotent {
		attempts += c.retries
	}
	var (
		err       error
		prev      error // the previous attempt's failure
		uncertain bool  // an earlier attempt may have taken effect
	)
	for attempt := 0; attempt < attempts; attempt++ {
		var wait time.Duration
		var retry bool
		err, retry, wait = c.attempt(ctx, cl.route.method, u, body, out)
		if err == nil {
			return nil
		}
		// A DELETE whose earlier attempt may have gone through finds the memory gone: that is
		// the outcome asked for.
		if uncertain && cl.route.method == http.MethodDelete && ErrorCode(err) == CodeNotFound {
			return nil
		}
		// A retry cut short by the deadline says so, and what the server answered before.
		if prev != nil && ctx.Err() != nil {
			err = fmt.Errorf("%w; the attempt before: %w", err, prev)
		}
		if !retry || attempt == attempts-1 || ctx.Err() != nil {
			break
		}
		prev = err
		uncertain = true
		if serr := c.sleep(ctx, backoff(attempt, c.backoff, wait, c.rand())); serr != nil {
			break // the deadline came first: report the last failure, not the wait
		}
	}
	return err
}

// attempt sends one request. It reports whether the failure may be retried and how long
// the server asked to wait (Retry-After).
func (c *Client) attempt(ctx context.Context, method, u string, body []byte, out any) (err error, retry bool, wait time.Duration) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return fmt.Errorf("client: %w", err), false, 0
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	if c.userAgent != "" {
		req.Header.Set("User-Agent", c.userAgent)
	}
	res, err := c.hc.Do(req)
	if err != nil {
		// A cancelled or expired context is the caller's decision, not a fault to retry.
		return fmt.Errorf("client: %s %s: %w", method, redact(u), err), ctx.Err() == nil, 0
	}
	defer res.Body.Close()
	b, rerr := io.ReadAll(io.LimitReader(res.Body, maxResponseBytes))
	if res.StatusCode < 200 || res.StatusCode > 299 {
		e := errorFrom(res, b)
		return e, retryableStatus(res.StatusCode), retryAfter(res.Header.Get("Retry-After"))
	}
	if rerr != nil {
		// The answer was cut: the request may have taken effect, so only idempotent calls
		// (the caller decides) repeat it.
		return fmt.Errorf("client: %s %s: reading the response: %w", method, redact(u), rerr), ctx.Err() == nil, 0
	}
	if out == nil || res.StatusCode == http.StatusNoContent {
		return nil, false, 0
	}
	if raw, ok := out.(*[]byte); ok { // a body that is not JSON (a report's CSV, HTML, PNG)
		*raw = b
		return nil, false, 0
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("client: %s %s: decoding the %d response: %w", method, redact(u), res.StatusCode, err), false, 0
	}
	return nil, false, 0
}

// retryableStatus: the gateway and availability failures, where the server did not act (or
// a proxy could not reach it), and 429.
func retryableStatus(status int) bool {
	switch status {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// retryAfter parses a Retry-After header in seconds (the form the server sends); an HTTP
// date or garbage is ignored.
func retryAfter(h string) time.Duration {
	if h == "" {
		return 0
	}
	var s int
	if _, err := fmt.Sscanf(h, "%d", &s); err != nil || s < 0 {
		return 0
	}
	if s > int(maxBackoff/time.Second) {
		return maxBackoff // before multiplying: a huge value would overflow into a negative wait
	}
	return time.Duration(s) * time.Second
}

// backoff is the wait before attempt+1: base·2^attempt scaled by a jitter in [0.5, 1.5)
// (jitter = 0.5 + r), so clients that failed together do not retry together; at least what
// the server asked for (Retry-After), at most maxBackoff.
func backoff(attempt int, base, serverWait time.Duration, r float64) time.Duration {
	d := base << min(attempt, 16)
	d = time.Duration(float64(d) * (0.5 + r))
	d = max(d, serverWait)
	return min(d, maxBackoff)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// redact drops the query from a URL in error messages (it may hold user text such as a
// conversation id); the path is kept, as it names the route.
func redact(u string) string {
	if i := strings.IndexByte(u, '?'); i >= 0 {
		return u[:i]
	}
	return u
}
