package embed

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/salience-ai/salience/models"
)

// Defaults of OpenAIConfig.
const (
	DefaultBatchSize     = 128              // inputs per request; servers cap batches at 256–2048
	DefaultOpenAITimeout = 30 * time.Second // per request
)

// OpenAIConfig configures an OpenAI-compatible embeddings client.
type OpenAIConfig struct {
	// BaseURL is the API root including its version, e.g. "http://localhost:11434/v1" for
	// Ollama or a vLLM/TEI server; requests go to BaseURL + "/embeddings". Empty means
	// OpenAI's own API.
	BaseURL string
	APIKey  string // may be empty for local servers
	Model   string // required
	// Dims is the vector size the model returns (required): every returned vector is
	// checked against it. It is not sent to the server, because servers other than OpenAI's
	// text-embedding-3 models reject a "dimensions" field.
	Dims      int
	Timeout   time.Duration // per attempt; 0 means DefaultOpenAITimeout
	BatchSize int           // inputs per request; 0 means DefaultBatchSize
	// Retries is how many times a request is retried after a 429, a 5xx or a timeout;
	// 0 means DefaultRetries, negative none. MinWait and MaxWait bound the exponential
	// backoff between attempts (0: DefaultMinWait, DefaultMaxWait); a Retry-After header
	// overrides it.
	Retries          int
	MinWait, MaxWait time.Duration
	// CacheSize is how many vectors the content-hash cache keeps (most recently used);
	// 0 means DefaultCacheSize, negative no cache.
	CacheSize int
}

// OpenAI embeds texts through any server that speaks the OpenAI /v1/embeddings API
// (OpenAI, vLLM, Ollama, TEI, …). Vectors are checked for count and size and
// L2-normalized. It is safe for concurrent use.
type OpenAI struct {
	client *openai.Client
	cfg    OpenAIConfig
	cache  *cache // nil when off
	// sleep turns a computed backoff into the time actually waited; tests record it and
	// wait nothing.
	sleep func(time.Duration) time.Duration
}

// NewOpenAI returns a client for cfg, or an error when Model or Dims is missing.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("embed: openai: model is required")
	}
	if cfg.Dims <= 0 {
		return nil, fmt.Errorf("embed: openai: dims must be positive, got %d", cfg.Dims)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultOpenAITimeout
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = DefaultBatchSize
	}
	switch {
	case cfg.Retries == 0:
		cfg.Retries = DefaultRetries
	case cfg.Retries < 0:
		cfg.Retries = 0
	}
	if cfg.MinWait <= 0 {
		cfg.MinWait = DefaultMinWait
	}
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = DefaultMaxWait
	}
	if cfg.CacheSize == 0 {
		cfg.CacheSize = DefaultCacheSize
	}
	o := &OpenAI{cfg: cfg, sleep: func(d time.Duration) time.Duration { return d }}
	if cfg.CacheSize > 0 {
		o.cache = newCache(cfg.CacheSize)
	}
	oc := openai.DefaultConfig(cfg.APIKey)
	if cfg.BaseURL != "" {
		oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	}
	oc.HTTPClient = o.retryClient(cfg.Timeout)
	o.client = openai.NewClientWithConfig(oc)
	return o, nil
}

// Dims returns the configured vector size.
func (o *OpenAI) Dims() int { return o.cfg.Dims }

// Name identifies the model and size, e.g. "openai:text-embedding-3-small:1536".
func (o *OpenAI) Name() string { return fmt.Sprintf("openai:%s:%d", o.cfg.Model, o.cfg.Dims) }

// Embed returns one vector per text. Texts it has embedded lately come from the
// content-hash cache; the others, each distinct text once, go in batches of BatchSize, one
// request at a time, each attempt under Timeout, retried on 429s, 5xx and timeouts, all
// under ctx. It fails when a request still fails after its retries, or when a response
// has the wrong number of vectors, an index out of range or twice, a vector of the wrong
// size or with a non-finite value; nothing partial is returned.
func (o *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	missing, where := o.cache.lookup(o.cfg.Model, texts, out)
	vecs := make([][]float32, len(missing))
	batches := (len(missing) + o.cfg.BatchSize - 1) / o.cfg.BatchSize
	for lo := 0; lo < len(missing); lo += o.cfg.BatchSize {
		hi := min(lo+o.cfg.BatchSize, len(missing))
		if err := o.batch(ctx, missing[lo:hi], vecs[lo:hi]); err != nil {
			return nil, fmt.Errorf("embed: openai: batch %d of %d (%d texts): %w", lo/o.cfg.BatchSize+1, batches, hi-lo, err)
		}
	}
	o.cache.fill(o.cfg.Model, missing, vecs, where, out)
	return out, nil
}

// batch embeds texts into out (same length).
func (o *OpenAI) batch(ctx context.Context, texts []string, out [][]float32) error {
	ctx, attempts := withAttempts(ctx)
	resp, err := o.client.CreateEmbeddings(ctx, openai.EmbeddingRequestStrings{
		Input: texts,
		Model: openai.EmbeddingModel(o.cfg.Model),
	})
	if err != nil {
		if n := attempts.Load(); n > 1 {
			return fmt.Errorf("gave up after %d attempts: %w", n, err)
		}
		return err
	}
	if len(resp.Data) != len(texts) {
		return fmt.Errorf("got %d vectors for %d texts", len(resp.Data), len(texts))
	}
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= len(texts) {
			return fmt.Errorf("vector index %d out of range [0, %d)", d.Index, len(texts))
		}
		if out[d.Index] != nil {
			return fmt.Errorf("vector index %d returned twice", d.Index)
		}
		if len(d.Embedding) != o.cfg.Dims {
			return fmt.Errorf("vector %d has %d dims, want %d (check the model and dims settings)", d.Index, len(d.Embedding), o.cfg.Dims)
		}
		if !models.NormalizeL2(d.Embedding) {
			return fmt.Errorf("vector %d has a value that is not a finite number", d.Index)
		}
		out[d.Index] = d.Embedding
	}
	return nil
}
