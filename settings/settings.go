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

	"github.com/salience-ai/salience/ids"
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
	AcquireLease(ctx context.Context, name, holder string, ttl time.Duration, now time.Time) (bool, error)
	ReleaseLease(ctx context.Context, name, holder string) error
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
	// writeLease bounds how long one writer holds a namespace's settings (a read, a
	// compare, two small writes).
	writeLease = 10 * time.Second
	// maxCached bounds the cache; it is dropped whole when full.
	maxCached = 10000
)

// auditKeyPrefix starts the state key of a namespace's audit trail (a JSON array).
const auditKeyPrefix = models.SettingsAuditKeyPrefix

// Options configure a Service.
type Options struct {
	TTL time.Duration    // 0 = DefaultTTL; negative: no cache, every For reads the store
	Now func() time.Time // nil = time.Now
}

// Service reads and writes namespace settings. It is safe for concurrent use.
type Service struct {
	store  Store
	ttl    time.Duration
	now    func() time.Time
	holder string // this service's lease holder name

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
	return &Service{store: st, ttl: opts.TTL, now: opts.Now, holder: "settings-" + ids.New(opts.Now()), cache: map[string]cached{}}
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
// the fields that changed. A non-zero Version in the result must equal the current version,
// else ECONFLICT (the writer read an older record). Writers on every server sharing the
// store are serialized by a lease; one that cannot get it within a few seconds is
// EUNAVAILABLE.
func (s *Service) Update(ctx context.Context, ns, by string, change func(cur *models.Settings) (*models.Settings, error)) (*models.Settings, error) {
	if err := s.lock(ctx, ns); err != nil {
		return nil, err
	}
	defer func() {
		// The lease expires by itself if this fails; a fresh context so a cancelled
		// request still releases it.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = s.store.ReleaseLease(rctx, lockName(ns), s.holder)
	}()
	cur, err := s.Get(ctx, ns)
	if err != nil {
		return nil, err
	}
	next, err := change(clone(cur))
	if err != nil {
		return nil, err
	}
	if next.Version != 0 && next.Version != cur.Version {
		return nil, &models.Error{Code: models.ECONFLICT, Field: "version", Message: fmt.Sprintf("the settings are at version %d, not %d: read them again", cur.Version, next.Version)}
	}
	if err := next.Validate(); err != nil {
		return nil, err
	}
	diff, err := models.DiffSettings(cur, next)
	if err != nil {
		return nil, err
	}
	if len(diff) == 0 {
		return cur, nil // nothing changed: no new version, no audit entry
	}
	now := s.now().UTC()
	next.Version, next.UpdatedAt, next.UpdatedBy = cur.Version+1, now, by
	b, err := json.Marshal(next)
	if err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	// The record first: an audit entry must never describe a write that did not happen.
	if err := s.store.SetState(ctx, models.SettingsKey(ns), string(b)); err != nil {
		return nil, fmt.Errorf("settings of %s: %w", ns, err)
	}
	s.put(ns, cached{s: next, at: s.now()})
	if err := s.audit(ctx, ns, models.SettingsChange{Version: next.Version, At: now, By: by, Changes: diff}); err != nil {
		return nil, err
	}
	return next, nil
}

func lockName(ns string) string { return "settings/" + ns }

// lock takes the namespace's settings lease, retrying while another writer holds it.
func (s *Service) lock(ctx context.Context, ns string) error {
	for i := 0; ; i++ {
		ok, err := s.store.AcquireLease(ctx, lockName(ns), s.holder, writeLease, s.now())
		if err != nil {
			return fmt.Errorf("settings of %s: %w", ns, err)
		}
		if ok {
			return nil
		}
		if i == 40 {
			return models.Errorf(models.EUNAVAILABLE, "the settings of %s are being written by another server; try again", ns)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
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
	var all []models.SettingsChange
	if raw != "" {
		if err := json.Unmarshal([]byte(raw), &all); err != nil {
			return nil, fmt.Errorf("settings audit of %s: %w", ns, err)
		}
	}
	return all, nil
}

func (s *Service) audit(ctx context.Context, ns string, c models.SettingsChange) error {
	all, err := s.readAudit(ctx, ns)
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
	if err := s.store.SetState(ctx, auditKeyPrefix+ns, string(b)); err != nil {
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
