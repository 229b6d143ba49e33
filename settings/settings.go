// Package settings keeps each namespace's settings record (models.Settings): the one reader
// every consumer uses (recall, the reranker, the decay policies), cached so a recall costs
// no store read, and the writes with their version and audit trail.
package settings

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/salience-ai/salience/models"
)

// Source returns a namespace's settings (a zero record, version 0, when none were written).
// Service.For is the one implementation; consumers declare this interface so their tests
// can pass a map.
type Source interface {
	For(ctx context.Context, ns string) (*models.Settings, error)
}

// Store is what the service needs of models.Store.
type Store interface {
	GetState(ctx context.Context, key string) (string, error)
	SetState(ctx context.Context, key, value string) error
	// Update runs fn in one transaction whose GetState locks the key it reads until commit
	// (models.Store.Update), so read-modify-writes of a key never interleave.
	Update(ctx context.Context, fn func(tx models.Tx) error) error
	Namespaces(ctx context.Context) ([]string, error)
}

// Defaults of Options.
const (
	// DefaultTTL is how long a namespace's settings are trusted before they are read again.
	// A write on this server is seen at once; another server sharing the store sees it
	// within the TTL.
	DefaultTTL = 10 * time.Second
	// AuditKeep is how many audit entries a namespace keeps, newest last.
	AuditKeep = 200
	// DefaultWriteWait is how long a settings write waits for the namespace's earlier
	// writes (on any server sharing the store) before giving up with EUNAVAILABLE. A write
	// takes milliseconds, so reaching it means a queue of hundreds, or a stuck store.
	DefaultWriteWait = 5 * time.Second
	// maxCached bounds the cache; it is dropped whole when full.
	maxCached = 10000
)

// auditKeyPrefix starts the state key of a namespace's audit trail (a JSON array).
const auditKeyPrefix = models.SettingsAuditKeyPrefix

// Options configure a Service.
type Options struct {
	TTL       time.Duration    // 0 = DefaultTTL; negative: no cache, every For reads the store
	Now       func() time.Time // nil = time.Now
	WriteWait time.Duration    // 0 = DefaultWriteWait: how long Update waits for earlier writers
}

// Service reads and writes namespace settings. It is safe for concurrent use.
type Service struct {
	store   Store
	ttl     time.Duration
	now     func() time.Time
	wait    time.Duration // Options.WriteWait
	writers nsLocks       // one Update per namespace at a time on this service

	mu    sync.Mutex
	cache map[string]cached
}

type cached struct {
	s   *models.Settings
	err error
	at  time.Time
}

// New returns the service over st.
func New(st Store, opts Options) *Service {
	if opts.TTL == 0 {
		opts.TTL = DefaultTTL
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.WriteWait <= 0 {
		opts.WriteWait = DefaultWriteWait
	}
	return &Service{store: st, ttl: opts.TTL, now: opts.Now, wait: opts.WriteWait, cache: map[string]cached{}}
}

// For returns ns's settings, cached for the TTL. A record that cannot be read or is invalid
// is an error (cached too, so a broken record costs one read per TTL); callers fall back to
// their defaults. The record returned is shared: callers must not modify it.
func (s *Service) For(ctx context.Context, ns string) (*models.Settings, error) {
	now := s.now()
	s.mu.Lock()
	c, ok := s.cache[ns]
	s.mu.Unlock()
	if ok && now.Sub(c.at) < s.ttl {
		return c.s, c.err
	}
	st, err := s.Get(ctx, ns)
	if err != nil && ctx.Err() != nil {
		return nil, err // the caller gave up: nothing learned about the record
	}
	s.put(ns, cached{s: st, err: err, at: now})
	return st, err
}

// Forget drops ns's cached settings, as the namespace was deleted: the next For reads the
// store. Other processes' caches see it within their TTL.
func (s *Service) Forget(ns string) {
	s.mu.Lock()
	delete(s.cache, ns)
	s.mu.Unlock()
}

func (s *Service) put(ns string, c cached) {
	s.mu.Lock()
	if len(s.cache) >= maxCached {
		s.cache = map[string]cached{}
	}
	s.cache[ns] = c
	s.mu.Unlock()
}

// Get reads ns's settings from the store, uncached. A missing record is version 0 with no
// overrides; a record that is not valid settings JSON is EINVALID naming the field.
func (s *Service) Get(ctx context.Context, ns string) (*models.Settings, error) {
	raw, err := s.store.GetState(ctx, models.SettingsKey(ns))
	if err != nil {
		return nil, fmt.Errorf("settings of %s: %w", ns, err)
	}
	return Parse(raw)
}

// Parse decodes a stored settings record strictly ("" is the empty record).
func Parse(raw string) (*models.Settings, error) {
	st := &models.Settings{}
	if raw == "" {
		return st, nil
	}
	dec := json.NewDecoder(stringsReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(st); err != nil {
		return nil, models.Invalid("", "stored settings are not a settings record: %v", err)
	}
	if dec.More() {
		return nil, models.Invalid("", "stored settings hold more than one JSON value")
	}
	upgrade(st)
	if err := st.Validate(); err != nil {
		return nil, err
	}
	return st, nil
}

// upgrade brings a record written under older rules within today's, so a namespace whose
// settings were valid when stored still loads: a threshold policy fixed:<x> spelled other
// than as a decimal is respelled, and a freshness half-life under the minimum (which
// silenced recall) becomes the minimum.
func upgrade(st *models.Settings) {
	st.ThresholdPolicy = models.UpgradeThresholdPolicy(st.ThresholdPolicy)
	if h := st.FreshnessHalfLifeHours; h > 0 && h < models.MinHalfLifeHours {
		st.FreshnessHalfLifeHours = models.MinHalfLifeHours
	}
}

// Update replaces ns's settings with what change returns from the current record, as one
// write: change sees the current settings (a copy it may keep), and its result is
// validated, versioned (current + 1), stamped with by and now, stored, and audited with
// the fields that changed, all in one store transaction. A non-zero Version in the result
// must equal the current version, else ECONFLICT (the writer read an older record).
//
// Writers of one namespace run one at a time: on this server behind a per-namespace lock,
// and across servers sharing the store through the store's transaction, which locks the
// record it reads until commit. So change always sees the latest record, and each write that
// changes something gets its own version and audit entry. A writer waits at most WriteWait
// for the ones before it, then gives up with EUNAVAILABLE (nothing written). change may run
// more than once (a store retries a transaction that lost a deadlock), so it must be pure.
func (s *Service) Update(ctx context.Context, ns, by string, change func(cur *models.Settings) (*models.Settings, error)) (*models.Settings, error) {
	wctx, cancel := context.WithTimeout(ctx, s.wait)
	defer cancel()
	unlock, err := s.writers.lock(wctx, ns)
	if err != nil {
		return nil, s.waitError(ctx, wctx, ns, err)
	}
	defer unlock()
	var out *models.Settings
	wrote := false
	err = s.store.Update(wctx, func(tx models.Tx) error {
		out, wrote = nil, false // a retried transaction starts over
		raw, err := tx.GetState(models.SettingsKey(ns))
		if err != nil {
			return fmt.Errorf("settings of %s: %w", ns, err)
		}
		cur, err := Parse(raw)
		if err != nil {
			return err
		}
		next, err := change(clone(cur))
		if err != nil {
			return err
		}
		if next.Version != 0 && next.Version != cur.Version {
			return &models.Error{Code: models.ECONFLICT, Field: "version", Message: fmt.Sprintf("the settings are at version %d, not %d: read them again", cur.Version, next.Version)}
		}
		if err := next.Validate(); err != nil {
			return err
		}
		diff, err := models.DiffSettings(cur, next)
		if err != nil {
			return err
		}
		if len(diff) == 0 {
			out = cur // nothing changed: no new version, no audit entry
			return nil
		}
		now := s.now().UTC()
		next.Version, next.UpdatedAt, next.UpdatedBy = cur.Version+1, now, by
		b, err := json.Marshal(next)
		if err != nil {
			return fmt.Errorf("settings: %w", err)
		}
		if err := tx.SetState(models.SettingsKey(ns), string(b)); err != nil {
			return fmt.Errorf("settings of %s: %w", ns, err)
		}
		if err := audit(tx, ns, models.SettingsChange{Version: next.Version, At: now, By: by, Changes: diff}); err != nil {
			return err
		}
		out, wrote = next, true
		return nil
	})
	if err != nil {
		return nil, s.waitError(ctx, wctx, ns, err)
	}
	if wrote {
		s.put(ns, cached{s: out, at: s.now()})
	}
	return out, nil
}

// waitError is err, or EUNAVAILABLE when the write failed once WriteWait had passed (wctx
// ended, the caller's ctx still live): stores report the end of a context in their own ways.
func (s *Service) waitError(ctx, wctx context.Context, ns string, err error) error {
	if ctx.Err() == nil && wctx.Err() != nil {
		e := models.Errorf(models.EUNAVAILABLE, "the settings of %s are being written by another request; waited %s, try again", ns, s.wait)
		e.Safe = true
		return e
	}
	return err
}

// nsLocks serializes a Service's writers per namespace: a lock is a one-slot channel, so a
// waiter can give up when its context ends. Entries are dropped when no one holds or waits.
type nsLocks struct {
	mu sync.Mutex
	m  map[string]*nsLock
}

type nsLock struct {
	slot chan struct{}
	refs int // holders and waiters
}

// lock takes ns's lock, waiting until ctx ends; unlock releases it.
func (l *nsLocks) lock(ctx context.Context, ns string) (unlock func(), err error) {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*nsLock{}
	}
	e := l.m[ns]
	if e == nil {
		e = &nsLock{slot: make(chan struct{}, 1)}
		l.m[ns] = e
	}
	e.refs++
	l.mu.Unlock()
	select {
	case e.slot <- struct{}{}:
		return func() { <-e.slot; l.drop(ns, e) }, nil
	case <-ctx.Done():
		l.drop(ns, e)
		return nil, ctx.Err()
	}
}

func (l *nsLocks) drop(ns string, e *nsLock) {
	l.mu.Lock()
	if e.refs--; e.refs == 0 {
		delete(l.m, ns)
	}
	l.mu.Unlock()
}

// History returns ns's audit trail, newest first, at most limit entries (0 = all kept).
func (s *Service) History(ctx context.Context, ns string, limit int) ([]models.SettingsChange, error) {
	all, err := s.readAudit(ctx, ns)
	if err != nil {
		return nil, err
	}
	out := make([]models.SettingsChange, 0, len(all))
	for i := len(all) - 1; i >= 0 && (limit <= 0 || len(out) < limit); i-- {
		out = append(out, all[i])
	}
	return out, nil
}

func (s *Service) readAudit(ctx context.Context, ns string) ([]models.SettingsChange, error) {
	raw, err := s.store.GetState(ctx, auditKeyPrefix+ns)
	if err != nil {
		return nil, fmt.Errorf("settings audit of %s: %w", ns, err)
	}
	return decodeAudit(ns, raw)
}

func decodeAudit(ns, raw string) ([]models.SettingsChange, error) {
	var all []models.SettingsChange
	if raw != "" {
		if err := json.Unmarshal([]byte(raw), &all); err != nil {
			return nil, fmt.Errorf("settings audit of %s: %w", ns, err)
		}
	}
	return all, nil
}

// audit appends c to ns's audit trail in tx, keeping the newest AuditKeep entries.
func audit(tx models.Tx, ns string, c models.SettingsChange) error {
	raw, err := tx.GetState(auditKeyPrefix + ns)
	if err != nil {
		return fmt.Errorf("settings audit of %s: %w", ns, err)
	}
	all, err := decodeAudit(ns, raw)
	if err != nil {
		return err
	}
	all = append(all, c)
	if len(all) > AuditKeep {
		all = all[len(all)-AuditKeep:]
	}
	b, err := json.Marshal(all)
	if err != nil {
		return fmt.Errorf("settings audit: %w", err)
	}
	if err := tx.SetState(auditKeyPrefix+ns, string(b)); err != nil {
		return fmt.Errorf("settings audit of %s: %w", ns, err)
	}
	return nil
}

// clone deep-copies a record through JSON, so a change function cannot alter the cached one.
func clone(s *models.Settings) *models.Settings {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // a Settings always marshals
	}
	var c models.Settings
	if err := json.Unmarshal(b, &c); err != nil {
		panic(err)
	}
	return &c
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }
