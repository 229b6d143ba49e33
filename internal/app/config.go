package app

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/salience-ai/salience/embed"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/recall"
	"github.com/salience-ai/salience/server"
	"github.com/salience-ai/salience/settings"
)

// Config is the configuration of `salience serve`, from flags with SALIENCE_* environment
// overrides (an environment variable applies when its flag is not given).
type Config struct {
	Addr            string        // --addr, SALIENCE_ADDR
	DataDir         string        // --data, SALIENCE_DATA; the database is <data>/salience.db
	KeysFile        string        // --keys, SALIENCE_KEYS; empty: no auth, loopback only
	MaxBodyBytes    int64         // --max-body-bytes, SALIENCE_MAX_BODY_BYTES
	MaxContentBytes int           // --max-content-bytes, SALIENCE_MAX_CONTENT_BYTES
	Embedder        string        // --embedder, SALIENCE_EMBEDDER: static, local or openai
	EmbedURL        string        // --embed-url, SALIENCE_EMBED_URL
	EmbedModel      string        // --embed-model, SALIENCE_EMBED_MODEL
	EmbedDims       int           // --embed-dims, SALIENCE_EMBED_DIMS
	EmbedKey        string        // --embed-key, SALIENCE_EMBED_KEY, else OPENAI_API_KEY
	LogLevel        string        // --log-level, SALIENCE_LOG_LEVEL
	LogFormat       string        // --log-format, SALIENCE_LOG_FORMAT: text or json
	ShutdownTimeout time.Duration // --shutdown-timeout, SALIENCE_SHUTDOWN_TIMEOUT
	Jobs            JobsConfig    // scheduled jobs and the decay policy (jobs.go)
	Rerank          RerankConfig  // the LLM reranker (rerank.go)
	Store           StoreConfig   // --store and --neo4j-* (store.go)
	SettingsWriters string        // --settings-writers, SALIENCE_SETTINGS_WRITERS: admin or namespace
	SettingsTTL     time.Duration // --settings-ttl, SALIENCE_SETTINGS_TTL: how long settings and experiments are cached; 0 = not at all
	PredictTTL      time.Duration // --predict-ttl, SALIENCE_PREDICT_TTL: how long proactive prediction's models are kept; 0 = rebuilt every call
}

// Defaults. `salience serve` with no configuration listens on loopback and keeps its data
// in ./data/salience.db.
const (
	DefaultAddr            = "127.0.0.1:7700"
	DefaultDataDir         = "./data"
	DefaultShutdownTimeout = 15 * time.Second
	DatabaseFile           = "salience.db"
)

// flagSet declares the serve flags on fs, bound to c (which holds the defaults).
func (c *Config) flagSet(fs *flag.FlagSet) {
	fs.StringVar(&c.Addr, "addr", c.Addr, "address to listen on (host:port); without --keys it must be a loopback address")
	fs.StringVar(&c.DataDir, "data", c.DataDir, "data directory; the database is <data>/salience.db")
	fs.StringVar(&c.KeysFile, "keys", c.KeysFile, "API keys file (JSON); without it every request is allowed and the server listens on loopback only")
	fs.Int64Var(&c.MaxBodyBytes, "max-body-bytes", c.MaxBodyBytes, "largest request body accepted, in bytes")
	fs.IntVar(&c.MaxContentBytes, "max-content-bytes", c.MaxContentBytes, "largest memory content accepted, in bytes")
	fs.StringVar(&c.Embedder, "embedder", c.Embedder, "embedder: static (semantic, built in), local (lexical, built in) or openai (any OpenAI-compatible /v1/embeddings server)")
	fs.StringVar(&c.EmbedURL, "embed-url", c.EmbedURL, "openai embedder: API base URL including /v1 (empty: OpenAI)")
	fs.StringVar(&c.EmbedModel, "embed-model", c.EmbedModel, "openai embedder: model name")
	fs.IntVar(&c.EmbedDims, "embed-dims", c.EmbedDims, "vector size: the model's for openai (required); 0 means 256 for local and static (static is 256 only)")
	fs.StringVar(&c.EmbedKey, "embed-key", c.EmbedKey, "openai embedder: API key (env SALIENCE_EMBED_KEY or OPENAI_API_KEY)")
	fs.StringVar(&c.LogLevel, "log-level", c.LogLevel, "log level: debug, info, warn or error")
	fs.StringVar(&c.LogFormat, "log-format", c.LogFormat, "log format: text or json")
	fs.StringVar(&c.SettingsWriters, "settings-writers", c.SettingsWriters, "who may write a namespace's settings: admin (the admin keys of the namespace) or namespace (also the keys granted it)")
	fs.DurationVar(&c.SettingsTTL, "settings-ttl", c.SettingsTTL, "how long this server trusts a namespace's settings and running experiment before reading them again; 0 reads them on every recall, so servers sharing a Neo4j store see a change at once (one more query a recall)")
	fs.DurationVar(&c.PredictTTL, "predict-ttl", c.PredictTTL, "how long a namespace's proactive prediction models (built from its turn log) are used before they are rebuilt; 0 rebuilds them on every prediction, so servers sharing a store agree at once")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", c.ShutdownTimeout, "how long shutdown waits for in-flight requests")
	c.Jobs.flagSet(fs)
	c.Rerank.flagSet(fs)
	c.Store.flagSet(fs)
}

// DefaultConfig returns the configuration of `salience serve` with no flags or environment.
func DefaultConfig() Config {
	return Config{
		Addr:            DefaultAddr,
		DataDir:         DefaultDataDir,
		MaxBodyBytes:    server.DefaultMaxBodyBytes,
		MaxContentBytes: models.MaxContentBytes,
		Embedder:        "static",
		LogLevel:        "info",
		LogFormat:       "text",
		ShutdownTimeout: DefaultShutdownTimeout,
		Jobs:            DefaultJobsConfig(),
		Rerank:          DefaultRerankConfig(),
		Store:           DefaultStoreConfig(),
		SettingsWriters: server.SettingsWritersAdmin,
		SettingsTTL:     settings.DefaultTTL,
		PredictTTL:      recall.DefaultPredictTTL,
	}
}

// envName is the environment variable of a flag: --max-body-bytes → SALIENCE_MAX_BODY_BYTES.
func envName(flagName string) string {
	return "SALIENCE_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// ApplyEnv sets every flag that was not given on the command line from its environment
// variable, when that is set. --embed-key also falls back to OPENAI_API_KEY, --rerank-key
// to ANTHROPIC_API_KEY.
func ApplyEnv(fs *flag.FlagSet, getenv func(string) string) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] {
			return
		}
		name := envName(f.Name)
		v := getenv(name)
		if v == "" && f.Name == "embed-key" {
			name, v = "OPENAI_API_KEY", getenv("OPENAI_API_KEY")
		}
		if v == "" && f.Name == "rerank-key" {
			name, v = "ANTHROPIC_API_KEY", getenv("ANTHROPIC_API_KEY")
		}
		if v == "" {
			return
		}
		if err := fs.Set(f.Name, v); err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: %w", name, v, err))
		}
	})
	return errors.Join(errs...)
}

// validate checks the configuration that needs no I/O.
func (c *Config) Validate() error {
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return fmt.Errorf("--addr %q: want host:port: %w", c.Addr, err)
	}
	if c.DataDir == "" {
		return errors.New("--data must not be empty")
	}
	if c.MaxBodyBytes < 1 {
		return fmt.Errorf("--max-body-bytes must be positive, got %d", c.MaxBodyBytes)
	}
	if c.MaxContentBytes < 1 {
		return fmt.Errorf("--max-content-bytes must be positive, got %d", c.MaxContentBytes)
	}
	switch c.Embedder {
	case "static":
		if c.EmbedDims != 0 && c.EmbedDims != embed.StaticDims {
			return fmt.Errorf("--embedder static makes %d-dimension vectors; --embed-dims must be 0 or %d, got %d", embed.StaticDims, embed.StaticDims, c.EmbedDims)
		}
	case "local":
		if c.EmbedDims < 0 {
			return fmt.Errorf("--embed-dims must not be negative, got %d", c.EmbedDims)
		}
	case "openai":
		if c.EmbedModel == "" {
			return errors.New("--embedder openai needs --embed-model")
		}
		if c.EmbedDims < 1 {
			return errors.New("--embedder openai needs --embed-dims (the model's vector size)")
		}
	default:
		return fmt.Errorf("--embedder %q: want static, local or openai", c.Embedder)
	}
	if _, err := parseLevel(c.LogLevel); err != nil {
		return err
	}
	if c.SettingsWriters != server.SettingsWritersAdmin && c.SettingsWriters != server.SettingsWritersNamespace {
		return fmt.Errorf("--settings-writers %q: want admin or namespace", c.SettingsWriters)
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return fmt.Errorf("--log-format %q: want text or json", c.LogFormat)
	}
	if c.SettingsTTL < 0 {
		return fmt.Errorf("--settings-ttl must not be negative, got %v", c.SettingsTTL)
	}
	if c.PredictTTL < 0 {
		return fmt.Errorf("--predict-ttl must not be negative, got %v", c.PredictTTL)
	}
	if c.ShutdownTimeout < 0 {
		return fmt.Errorf("--shutdown-timeout must not be negative, got %v", c.ShutdownTimeout)
	}
	if err := c.Rerank.Validate(); err != nil {
		return err
	}
	if err := c.Store.Validate(); err != nil {
		return err
	}
	return c.Jobs.Validate()
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("--log-level %q: want debug, info, warn or error", s)
	}
	return l, nil
}

// errOpenWithoutKeys explains the one rule that protects a server started without keys.
var errOpenWithoutKeys = errors.New("refusing to listen on a non-loopback address without API keys")

// checkListenAddr enforces that a server without API keys listens on loopback only: anyone
// who can reach it could read and write every namespace.
func checkListenAddr(addr string, haveKeys bool) error {
	if haveKeys {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %w", addr, err)
	}
	if !isLoopbackHost(host) {
		return fmt.Errorf("%w: --addr %s is not loopback; with no --keys file every request is allowed, "+
			"so the server only listens on 127.0.0.1, ::1 or localhost. Give --keys FILE (see docs/reference.md#api-keys) to listen on %s",
			errOpenWithoutKeys, addr, addr)
	}
	return nil
}

// isLoopbackHost reports whether host names the loopback interface. An empty host (":7700")
// means every interface, and other names could resolve anywhere, so both are not loopback.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// isLoopbackAddr reports whether a bound address is on loopback; checked again after
// listening, in case "localhost" resolved somewhere unexpected.
func isLoopbackAddr(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}
