package app

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestServeRefusesWebPagesAndNamesItsAddress: over real TCP, the keyless server refuses a
// rebinding page's Host and a cross-site Origin, and its /openapi.yaml names the address it
// bound (the port --addr 127.0.0.1:0 chose), not the default 127.0.0.1:7700.
func TestServeRefusesWebPagesAndNamesItsAddress(t *testing.T) {
	s := startServer(t, "")
	get := func(path string, header ...string) (int, string) {
		t.Helper()
		req, err := http.NewRequest("GET", s.base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(header); i += 2 {
			if header[i] == "Host" {
				req.Host = header[i+1]
			} else {
				req.Header.Set(header[i], header[i+1])
			}
		}
		res, err := s.http().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	for _, h := range [][]string{
		{"Host", "evil.example:7700"},
		{"Host", "localhost.evil.example"},
		{"Origin", "http://evil.example"},
		{"Origin", "null"},
	} {
		if code, body := get("/v1/admin/namespaces", h...); code != 403 || !strings.Contains(body, `"forbidden"`) {
			t.Errorf("%s: %s = %d %s, want 403 forbidden", h[0], h[1], code, body)
		}
	}
	if code, body := get("/v1/admin/namespaces", "Origin", "http://"+s.m.Addr()); code != 200 {
		t.Errorf("a loopback Origin = %d %s, want 200", code, body)
	}
	code, doc := get("/openapi.yaml")
	if want := "\n  - url: \"" + s.base + "\"\n"; code != 200 || !strings.Contains(doc, want) {
		t.Errorf("/openapi.yaml = %d, want it to name %q", code, s.base)
	}
}
