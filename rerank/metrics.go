package rerank

import "github.com/prometheus/client_golang/prometheus"

// metrics are the reranker's Prometheus collectors. They are not registered anywhere: the
// server registers what Collectors returns on its own registry.
type metrics struct {
	outcomes *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

// latencyBuckets span a fast local model (5 ms) to a slow remote one (10 s): users of other
// memory servers saw Haiku reranking add about 2.2 s a message.
var latencyBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 1, 2.5, 5, 10}

func newMetrics() *metrics {
	return &metrics{
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "salience_rerank_total",
			Help: "Recall requests by rerank status: applied, skipped_budget, timeout, error, circuit_open, off.",
		}, []string{"status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "salience_rerank_latency_seconds",
			Help:    "Duration of calls to the rerank endpoint by status (applied, timeout, error).",
			Buckets: latencyBuckets,
		}, []string{"status"}),
	}
}

// Collectors returns the reranker's metrics for the caller to register.
func (r *Reranker) Collectors() []prometheus.Collector {
	return []prometheus.Collector{r.metrics.outcomes, r.metrics.latency}
}
