package embed

import (
	"context"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	retryablehttp "github.com/hashicorp/go-retryablehttp"
)

// Retry defaults: five attempts spread over about 8 s, so a rate limit or a restarting
// server costs a slow batch instead of a failed ingest.
const (
	DefaultRetries = 4
	DefaultMinWait = 500 * time.Millisecond
	DefaultMaxWait = 30 * time.Second
)

// backoff is the wait before retry attempt+1 (attempt counts from 0). A server's
// Retry-After — seconds or an HTTP date, on any response we retry — is obeyed as given: it
// knows when it will take requests again. Otherwise the wait grows exponentially,
// min·2^attempt capped at max, with "equal jitter" (half fixed, half uniform: u in [0, 1)),
// so clients that failed together do not retry together, yet none retries at once.
func backoff(min, max time.Duration, attempt int, retryAfter time.Duration, haveRetryAfter bool, u float64) time.Duration {
	if haveRetryAfter {
		return retryAfter
	}
	d := float64(min) * math.Pow(2, float64(attempt))
	if d > float64(max) || math.IsInf(d, 0) {
		d = float64(max)
	}
	return time.Duration(d/2 + u*d/2)
}

// parseRetryAfter reads a Retry-After header: delay-seconds or an HTTP date (RFC 9110
// §10.2.3), relative to now. A date in the past means now.
func parseRetryAfter(h string, now time.Time) (time.Duration, bool) {
	if h == "" {
		return 0, false
	}
	if s, err := strconv.ParseInt(h, 10, 64); err == nil {
		if s < 0 {
			return 0, false
		}
		return time.Duration(s) * time.Second, true
	}
	t, err := http.ParseTime(h)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

// attemptsKey carries a call's attempt counter through the retrying client, so an error
// can say how many attempts were made.
type attemptsKey struct{}

func withAttempts(ctx context.Context) (context.Context, *atomic.Int32) {
	n := new(atomic.Int32)
	return context.WithValue(ctx, attemptsKey{}, n), n
}

// retryClient returns the HTTP client of the OpenAI embedder: each attempt runs under
// timeout; 429s, 5xx (but 501) and transport failures, timeouts included, are retried up
// to retries times with backoff; the caller's context bounds everything. After the last
// attempt the server's own response goes back to the caller, so its error message is kept.
func (o *OpenAI) retryClient(timeout time.Duration) *http.Client {
	rc := retryablehttp.NewClient()
	rc.HTTPClient = &http.Client{Timeout: timeout}
	rc.Logger = nil
	rc.RetryMax = o.cfg.Retries
	rc.RetryWaitMin, rc.RetryWaitMax = o.cfg.MinWait, o.cfg.MaxWait
	rc.CheckRetry = retryablehttp.DefaultRetryPolicy
	rc.ErrorHandler = retryablehttp.PassthroughErrorHandler
	rc.RequestLogHook = func(_ retryablehttp.Logger, r *http.Request, attempt int) {
		if n, ok := r.Context().Value(attemptsKey{}).(*atomic.Int32); ok {
			n.Store(int32(attempt + 1))
		}
	}
	rc.Backoff = func(min, max time.Duration, attempt int, resp *http.Response) time.Duration {
		var ra time.Duration
		var have bool
		if resp != nil {
			ra, have = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
		}
		return o.sleep(backoff(min, max, attempt, ra, have, rand.Float64()))
	}
	return rc.StandardClient()
}
