package server

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"

	"github.com/salience-ai/salience/models"
)

// MinKeyLength is the shortest API key accepted in a keys file: keys are bearer secrets,
// so they must not be guessable (a random 32-character key is the suggestion).
const MinKeyLength = 16

// AllNamespaces in a key's namespace list grants every namespace.
const AllNamespaces = "*"

// KeysFile is the JSON document given with --keys:
//
//	{"keys": [{"key": "sk-…", "namespaces": ["a", "b"], "admin": false}]}
type KeysFile struct {
	Keys []KeyEntry `json:"keys"`
}

// KeyEntry is one API key and what it is granted.
type KeyEntry struct {
	// Key is the bearer secret, at least MinKeyLength printable ASCII characters.
	Key string `json:"key"`
	// Name is an optional label used in logs instead of the secret.
	Name string `json:"name,omitempty"`
	// Namespaces the key may read and write; "*" grants all.
	Namespaces []string `json:"namespaces"`
	// Admin makes the key admin over its namespaces (AdminOf): their settings, experiments,
	// deletion and relearning; with "*" over every namespace and the server-wide jobs.
	Admin bool `json:"admin,omitempty"`
}

// Principal is who a request acts as: the key it authenticated with and its grants.
type Principal struct {
	Name       string
	Admin      bool
	all        bool
	namespaces map[string]bool
}

// CanAccess reports whether the principal is granted namespace ns.
func (p *Principal) CanAccess(ns string) bool { return p.all || p.namespaces[ns] }

// AdminOf is the one rule of admin keys: a key is admin only over the namespaces it is
// granted, and a grant of "*" makes it admin of every namespace. ns = AllNamespaces asks
// for that global admin, which the server-wide routes (the jobs) need.
func (p *Principal) AdminOf(ns string) bool {
	if ns == AllNamespaces {
		return p.Admin && p.all
	}
	return p.Admin && p.CanAccess(ns)
}

// anonymous is the principal of every request when no keys are configured (loopback only):
// a global admin.
var anonymous = &Principal{Name: "anonymous", Admin: true, all: true}

// Keyring holds the configured API keys by the SHA-256 of the secret. Looking a token up by
// its hash takes the same time whatever its prefix matches, so comparisons leak nothing
// useful about a key.
type Keyring struct {
	byHash map[[sha256.Size]byte]*Principal
}

// Len returns the number of keys.
func (k *Keyring) Len() int { return len(k.byHash) }

// Lookup returns the principal of a bearer token, or false when the token is unknown.
func (k *Keyring) Lookup(token string) (*Principal, bool) {
	p, ok := k.byHash[sha256.Sum256([]byte(token))]
	return p, ok
}

// LoadKeys reads and parses a keys file.
func LoadKeys(path string) (*Keyring, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("keys file: %w", err)
	}
	k, err := ParseKeys(b)
	if err != nil {
		return nil, &keysFileError{path: path, err: err}
	}
	return k, nil
}

// keysFileError says what is wrong in a keys file once: main prints "salience: " before
// every error, and the text of a models.Error carries its own "salience: invalid: " prefix,
// so wrapping it with %w printed the prefix twice.
type keysFileError struct {
	path string
	err  error
}

func (e *keysFileError) Error() string {
	var me *models.Error
	if !errors.As(e.err, &me) {
		return fmt.Sprintf("keys file %s: %v", e.path, e.err)
	}
	msg := fmt.Sprintf("keys file %s: %s", e.path, me.Message)
	if f := me.Field; f != "" {
		msg += " (at " + f + ")"
	}
	return msg
}

func (e *keysFileError) Unwrap() error { return e.err }

// ParseKeys parses a keys file (see KeysFile). It is strict: unknown fields, short or
// duplicate keys, invalid namespace names and keys granted no namespace are EINVALID errors
// naming the entry ("keys[2].namespaces[0]"). An admin key too must list its namespaces:
// admin over nothing is a mistake, and a silent "everything" is the mistake that hurts. An
// empty list is an error too: a keys file that grants nobody anything is a mistake, not a
// way to lock the server.
func ParseKeys(data []byte) (*Keyring, error) {
	var f KeysFile
	if err := decodeStrict(data, &f); err != nil {
		return nil, err
	}
	if len(f.Keys) == 0 {
		return nil, models.Invalid("keys", "no keys: the file must list at least one key")
	}
	k := &Keyring{byHash: make(map[[sha256.Size]byte]*Principal, len(f.Keys))}
	for i, e := range f.Keys {
		field := fmt.Sprintf("keys[%d]", i)
		if len(e.Key) < MinKeyLength {
			return nil, models.Invalid(field+".key", "a key must be at least %d characters", MinKeyLength)
		}
		if !printableASCII(e.Key) {
			return nil, models.Invalid(field+".key", "a key must be printable ASCII without spaces")
		}
		if len(e.Namespaces) == 0 {
			if e.Admin {
				return nil, models.Invalid(field+".namespaces", "an admin key is admin over the namespaces it lists: list them, or [\"*\"] for every namespace")
			}
			return nil, models.Invalid(field+".namespaces", "the key is granted no namespace")
		}
		p := &Principal{Name: e.Name, Admin: e.Admin, namespaces: make(map[string]bool, len(e.Namespaces))}
		if p.Name == "" {
			p.Name = field
		}
		for j, ns := range e.Namespaces {
			if ns == AllNamespaces {
				p.all = true
				continue
			}
			if err := models.ValidateNamespace(ns); err != nil {
				return nil, models.Invalid(fmt.Sprintf("%s.namespaces[%d]", field, j), "%q is not a valid namespace name (or \"*\")", models.Clip(ns, 70))
			}
			p.namespaces[ns] = true
		}
		h := sha256.Sum256([]byte(e.Key))
		if _, dup := k.byHash[h]; dup {
			return nil, models.Invalid(field+".key", "the same key is listed twice")
		}
		k.byHash[h] = p
	}
	return k, nil
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}
