package client

import (
	"net/http"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzErrorFrom: whatever a server or a proxy answers, the client makes an *Error of it with
// a code and a message, and cuts no rune in half.
func FuzzErrorFrom(f *testing.F) {
	f.Add(400, []byte(`{"error":{"code":"invalid","message":"content is empty","field":"content"}}`))
	f.Add(502, []byte("<html>bad gateway</html>"))
	f.Add(503, []byte(""))
	f.Add(418, []byte(`{"error":{}}`))
	f.Add(500, []byte("é"+string(make([]byte, 300))))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		e := errorFrom(&http.Response{StatusCode: status, Header: http.Header{}}, body)
		if e.Code == "" || e.Status != status {
			t.Fatalf("errorFrom(%d, %q) = %+v", status, body, e)
		}
		if utf8.Valid(body) && !utf8.ValidString(e.Message) {
			t.Fatalf("message %q cuts a rune", e.Message)
		}
	})
}

// FuzzRetryAfter: any header gives a wait between 0 and the cap.
func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"", "1", "120", "-3", "Wed, 21 Oct 2015 07:28:00 GMT", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		if d := retryAfter(h); d < 0 || d > maxBackoff {
			t.Fatalf("retryAfter(%q) = %v, want 0..%v", h, d, maxBackoff)
		}
	})
}

func TestRetryAfter(t *testing.T) {
	cases := map[string]time.Duration{"": 0, "1": time.Second, "2": 2 * time.Second, "-3": 0, "soon": 0,
		"Wed, 21 Oct 2015 07:28:00 GMT": 0, "3600": maxBackoff}
	for h, want := range cases {
		if got := retryAfter(h); got != want {
			t.Errorf("retryAfter(%q) = %v, want %v", h, got, want)
		}
	}
}
