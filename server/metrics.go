package server

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the server's Prometheus collectors, on a registry of its own so that two
// servers in one process (tests) never collide and nothing registers itself globally.
type metrics struct {
	registry        *prometheus.Registry
	requests        *prometheus.CounterVec
	requestDuration *prometheus.HistogramVec
	recallLatency   *prometheus.HistogramVec
	ingested        prometheus.Counter
}

// latencyBuckets spread from 0.5 ms to 10 s: recall targets a p95 of 10 ms in-process and
// 25 ms over HTTP (docs/design.md#quality-bars), while ingest with a remote embedder takes seconds.
var latencyBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

func newMetrics(extra ...prometheus.Collector) *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "salience_http_requests_total",
			Help: "HTTP requests by route, method and status code.",
		}, []string{"route", "method", "code"}),
		requestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "salience_http_request_duration_seconds",
			Help:    "HTTP request duration by route, method and status code.",
			Buckets: latencyBuckets,
		}, []string{"route", "method", "code"}),
		recallLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "salience_recall_latency_seconds",
			Help:    "Server-side latency of the recall pipeline by mode.",
			Buckets: latencyBuckets,
		}, []string{"mode"}),
		ingested: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "salience_memories_ingested_total",
			Help: "Memories created (parents, not chunks).",
		}),
	}
	m.registry.MustRegister(
		m.requests, m.requestDuration, m.recallLatency, m.ingested,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	m.registry.MustRegister(extra...)
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{Registry: m.registry})
}
