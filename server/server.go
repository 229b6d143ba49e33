// Package server is Salience's HTTP API on gin: routes, authentication, strict request
// decoding, the one error shape and its status table, metrics and the OpenAPI document.
//
// It reaches the rest of Salience only through small interfaces, each declared beside the
// handlers that call it (Ingester and MemoryStore in memories.go, Recaller in recall.go,
// NamespaceLister in admin.go, JobScheduler and ResurfacingQueue in jobs.go, Engager in
// engagement.go, MetricsReporter in nsmetrics.go); internal/app wires the real services in.
package server

import (
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/salience-ai/salience/models"
)

// Defaults of Config.
const (
	DefaultMaxBodyBytes = 16 << 20 // 16 MiB: room for a large batch, far below memory trouble
)

// Config is what a Server is built from.
type Config struct {
	Ingester   Ingester
	Recaller   Recaller
	Memories   MemoryStore
	Namespaces NamespaceLister
	// Embedder is the embedder the Ingester and Recaller use, shown by the namespace list.
	Embedder models.EmbedderIdentity
	// Ready reports whether the store has loaded its indexes; nil means always ready.
	Ready func() bool

	// Jobs serves the /v1/admin/jobs routes (jobs.Scheduler); nil answers them 503.
	Jobs JobScheduler
	// Queue serves GET /v1/namespaces/{ns}/resurfacing (the store); nil answers it 503.
	Queue ResurfacingQueue
	// Engagement serves POST /v1/namespaces/{ns}/engagement (engagement.Service); nil
	// answers it 503.
	Engagement Engager
	// Reports serves GET /v1/namespaces/{ns}/metrics (engagement.Service); nil answers it 503.
	Reports MetricsReporter
	// Relearner serves POST /v1/admin/namespaces/{ns}/relearn (engagement.Service); nil
	// answers it 503.
	Relearner Relearner
	// Settings serves /v1/namespaces/{ns}/settings (settings.Service); nil answers it 503.
	// SettingsWriters says who may call it: SettingsWritersAdmin ("" too) or
	// SettingsWritersNamespace.
	Settings        SettingsService
	SettingsWriters string
	// Thresholds serves GET /v1/namespaces/{ns}/thresholds; nil answers it 503.
	Thresholds ThresholdReporter
	// Predictor serves POST /v1/namespaces/{ns}/predict; nil = the Recaller when it
	// predicts too (recall.Pipeline does), else the route answers 503.
	Predictor Predictor
	// Experiments serves /v1/namespaces/{ns}/experiments (experiment.Service), under the
	// settings routes' authorization; nil answers it 503.
	Experiments ExperimentService

	// Keys are the API keys; nil means no authentication (the caller must then listen on
	// loopback only).
	Keys *Keyring
	// MaxBodyBytes caps request bodies; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64

	// Addr is the address the server listens on (host:port, as bound), named as the server
	// in the served /openapi.yaml; empty keeps the document's default, 127.0.0.1:7700.
	Addr string

	// Logger receives the access log and errors; nil discards them.
	Logger *slog.Logger
	// Now is the server clock, stamped on recall requests; nil means time.Now.
	Now func() time.Time
	// Collectors are more Prometheus metrics to serve at /metrics (the reranker's).
	Collectors []prometheus.Collector
}

// Server is the HTTP API. Build it with New and serve Handler().
type Server struct {
	ingester   Ingester
	recaller   Recaller
	editor     MemoryEditor // the Ingester, when it edits (ingest.Service does)
	memories   MemoryStore
	namespaces NamespaceLister
	embedder   models.EmbedderIdentity
	ready      func() bool
	keys       *Keyring
	maxBody    int64
	log        *slog.Logger
	now        func() time.Time

	jobs  JobScheduler
	queue ResurfacingQueue

	engagement Engager
	reports    MetricsReporter
	relearner  Relearner
	thresholds ThresholdReporter
	predictor  Predictor

	settings        SettingsService
	settingsWriters string
	experiments     ExperimentService

	metrics    *metrics
	openAPIDoc []byte // openapi.yaml naming Config.Addr
	engine     *gin.Engine
}

// ginReleaseMode keeps gin from printing its debug banner and route table. gin keeps the mode
// in a package variable, so it is set once, by the first New, not as an import side effect.
var ginReleaseMode sync.Once

// New builds a Server and its routes.
func New(cfg Config) *Server {
	ginReleaseMode.Do(func() { gin.SetMode(gin.ReleaseMode) })
	s := &Server{
		ingester:        cfg.Ingester,
		recaller:        cfg.Recaller,
		memories:        cfg.Memories,
		namespaces:      cfg.Namespaces,
		embedder:        cfg.Embedder,
		ready:           cfg.Ready,
		jobs:            cfg.Jobs,
		queue:           cfg.Queue,
		engagement:      cfg.Engagement,
		reports:         cfg.Reports,
		relearner:       cfg.Relearner,
		thresholds:      cfg.Thresholds,
		predictor:       cfg.Predictor,
		settings:        cfg.Settings,
		settingsWriters: cfg.SettingsWriters,
		experiments:     cfg.Experiments,
		keys:            cfg.Keys,
		maxBody:         cfg.MaxBodyBytes,
		log:             cfg.Logger,
		now:             cfg.Now,
		metrics:         newMetrics(cfg.Collectors...),
		openAPIDoc:      openAPIFor(cfg.Addr),
	}
	if s.predictor == nil {
		s.predictor, _ = cfg.Recaller.(Predictor)
	}
	s.editor, _ = cfg.Ingester.(MemoryEditor)
	if s.ready == nil {
		s.ready = func() bool { return true }
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBodyBytes
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.engine = s.routes()
	return s
}

// Handler returns the HTTP handler of the API.
func (s *Server) Handler() http.Handler { return s.engine }

// Route is one registered route.
type Route struct {
	Method string
	Path   string // gin syntax: /v1/namespaces/:ns/memories
}

// Routes lists every registered route; tests use it to check that none is missing from the
// OpenAPI document or from the authorization tests.
func (s *Server) Routes() []Route {
	var rs []Route
	for _, r := range s.engine.Routes() {
		rs = append(rs, Route{Method: r.Method, Path: r.Path})
	}
	return rs
}
