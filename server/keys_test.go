package server

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/salience-ai/salience/models"
)

func TestParseKeys(t *testing.T) {
	const good = `{"keys":[
		{"key":"sk-aaaaaaaaaaaaaaaa","namespaces":["a","b"]},
		{"key":"sk-bbbbbbbbbbbbbbbb","namespaces":["*"],"name":"ops"},
		{"key":"sk-cccccccccccccccc","namespaces":["gamma"],"admin":true},
		{"key":"sk-dddddddddddddddd","namespaces":["*"],"admin":true}]}`
	k, err := ParseKeys([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if k.Len() != 4 {
		t.Fatalf("Len = %d, want 4", k.Len())
	}
	tests := []struct {
		token       string
		found       bool
		name        string
		admin       bool
		canA, canZZ bool
		// AdminOf("gamma"), AdminOf("a"), AdminOf("*"): admin over its own namespaces only.
		adminGamma, adminA, adminAll bool
	}{
		{"sk-aaaaaaaaaaaaaaaa", true, "keys[0]", false, true, false, false, false, false},
		{"sk-bbbbbbbbbbbbbbbb", true, "ops", false, true, true, false, false, false},
		{"sk-cccccccccccccccc", true, "keys[2]", true, false, false, true, false, false},
		{"sk-dddddddddddddddd", true, "keys[3]", true, true, true, true, true, true},
		{"sk-aaaaaaaaaaaaaaa", false, "", false, false, false, false, false, false},
		{"", false, "", false, false, false, false, false, false},
	}
	for _, tt := range tests {
		p, ok := k.Lookup(tt.token)
		if ok != tt.found {
			t.Errorf("Lookup(%q) found = %v, want %v", tt.token, ok, tt.found)
			continue
		}
		if !ok {
			continue
		}
		if p.Name != tt.name || p.Admin != tt.admin || p.CanAccess("a") != tt.canA || p.CanAccess("zz") != tt.canZZ {
			t.Errorf("Lookup(%q) = %+v, want name %q admin %v a %v zz %v", tt.token, p, tt.name, tt.admin, tt.canA, tt.canZZ)
		}
		if g, a, all := p.AdminOf("gamma"), p.AdminOf("a"), p.AdminOf(AllNamespaces); g != tt.adminGamma || a != tt.adminA || all != tt.adminAll {
			t.Errorf("Lookup(%q): AdminOf gamma, a, * = %v %v %v, want %v %v %v", tt.token, g, a, all, tt.adminGamma, tt.adminA, tt.adminAll)
		}
	}
}

func TestParseKeysRejects(t *testing.T) {
	tests := []struct {
		name, data, field string
	}{
		{"empty file", ``, ""},
		{"not JSON", `keys: []`, ""},
		{"no keys", `{"keys":[]}`, "keys"},
		{"unknown field", `{"keys":[{"key":"sk-aaaaaaaaaaaaaaaa","namespaces":["a"],"admn":true}]}`, "keys[0].admn"},
		{"short key", `{"keys":[{"key":"sk-short","namespaces":["a"]}]}`, "keys[0].key"},
		{"key with space", `{"keys":[{"key":"sk-aaaaaaaa aaaaaaaa","namespaces":["a"]}]}`, "keys[0].key"},
		{"granted nothing", `{"keys":[{"key":"sk-aaaaaaaaaaaaaaaa"}]}`, "keys[0].namespaces"},
		{"admin of nothing", `{"keys":[{"key":"sk-aaaaaaaaaaaaaaaa","admin":true}]}`, "keys[0].namespaces"},
		{"bad namespace", `{"keys":[{"key":"sk-aaaaaaaaaaaaaaaa","namespaces":["a","no/slash"]}]}`, "keys[0].namespaces[1]"},
		{"duplicate", `{"keys":[{"key":"sk-aaaaaaaaaaaaaaaa","namespaces":["a"]},{"key":"sk-aaaaaaaaaaaaaaaa","namespaces":["b"]}]}`, "keys[1].key"},
		{"wrong type", `{"keys":[{"key":"sk-aaaaaaaaaaaaaaaa","namespaces":"a"}]}`, "keys[0].namespaces"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseKeys([]byte(tt.data))
			if models.ErrorCode(err) != models.EINVALID || models.ErrorField(err) != tt.field {
				t.Errorf("err = %v (field %q), want invalid naming %q", err, models.ErrorField(err), tt.field)
			}
		})
	}
}

func TestLoadKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.json")
	if _, err := LoadKeys(path); err == nil {
		t.Fatal("LoadKeys of a missing file: no error")
	}
	if err := os.WriteFile(path, []byte(`{"keys":[{"key":"sk-aaaaaaaaaaaaaaaa","namespaces":["a"]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	k, err := LoadKeys(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := k.Lookup("sk-aaaaaaaaaaaaaaaa"); !ok {
		t.Error("key from file not found")
	}
}

// TestLoadKeysErrorSaysItOnce: the error main prints after "salience: " carries no second
// "salience: invalid:" prefix, and still names the file, the problem and the entry.
func TestLoadKeysErrorSaysItOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.json")
	if err := os.WriteFile(path, []byte(`{"keys":[{"key":"short","namespaces":["a"]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadKeys(path)
	want := "keys file " + path + ": a key must be at least 16 characters (at keys[0].key)"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
	if models.ErrorField(err) != "keys[0].key" {
		t.Errorf("field = %q, the models.Error is no longer reachable", models.ErrorField(err))
	}
}
