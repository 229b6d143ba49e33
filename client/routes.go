package client

import (
	"net/url"
	"strings"
)

// route is one API route in the OpenAPI document's syntax (/v1/namespaces/{ns}/recall).
type route struct {
	method string
	path   string
}

func (r route) String() string { return r.method + " " + r.path }

// expand fills the {…} parameters of the path, in order, each escaped as one path segment.
func (r route) expand(params ...string) string {
	var b strings.Builder
	p := r.path
	for _, v := range params {
		i := strings.IndexByte(p, '{')
		j := strings.IndexByte(p, '}')
		if i < 0 || j < i {
			panic("client: more parameters than " + r.path + " takes")
		}
		b.WriteString(p[:i])
		b.WriteString(url.PathEscape(v))
		p = p[j+1:]
	}
	if strings.IndexByte(p, '{') >= 0 {
		panic("client: too few parameters for " + r.path)
	}
	b.WriteString(p)
	return b.String()
}

// The routes the client calls. Every method goes through one of them, and a test checks
// this list against the OpenAPI document both ways.
var (
	routeHealth      = route{"GET", "/healthz"}
	routeReady       = route{"GET", "/readyz"}
	routeCreate      = route{"POST", "/v1/namespaces/{ns}/memories"}
	routeList        = route{"GET", "/v1/namespaces/{ns}/memories"}
	routeGet         = route{"GET", "/v1/namespaces/{ns}/memories/{id}"}
	routeDelete      = route{"DELETE", "/v1/namespaces/{ns}/memories/{id}"}
	routeEdit        = route{"PATCH", "/v1/namespaces/{ns}/memories/{id}"}
	routeRecall      = route{"POST", "/v1/namespaces/{ns}/recall"}
	routePredict     = route{"POST", "/v1/namespaces/{ns}/predict"}
	routeEngagement  = route{"POST", "/v1/namespaces/{ns}/engagement"}
	routeMetrics     = route{"GET", "/v1/namespaces/{ns}/metrics"}
	routeResurfacing = route{"GET", "/v1/namespaces/{ns}/resurfacing"}
	routeThresholds  = route{"GET", "/v1/namespaces/{ns}/thresholds"}
	routeNamespaces  = route{"GET", "/v1/admin/namespaces"}
	routeJobs        = route{"GET", "/v1/admin/jobs"}
	routeJobRuns     = route{"GET", "/v1/admin/jobs/{name}/runs"}
	routeJobRun      = route{"POST", "/v1/admin/jobs/{name}/run"}
	routeRelearn     = route{"POST", "/v1/admin/namespaces/{ns}/relearn"}
	routeDeleteNS    = route{"DELETE", "/v1/admin/namespaces/{ns}"}
	routeSettings    = route{"GET", "/v1/namespaces/{ns}/settings"}
	routePutSettings = route{"PUT", "/v1/namespaces/{ns}/settings"}
	routePatch       = route{"PATCH", "/v1/namespaces/{ns}/settings"}
	routeHistory     = route{"GET", "/v1/namespaces/{ns}/settings/history"}
	routeExperiments = route{"GET", "/v1/namespaces/{ns}/experiments"}
	routeExpCreate   = route{"POST", "/v1/namespaces/{ns}/experiments"}
	routeExperiment  = route{"GET", "/v1/namespaces/{ns}/experiments/{id}"}
	routeExpStop     = route{"POST", "/v1/namespaces/{ns}/experiments/{id}/stop"}
	routeExpReport   = route{"GET", "/v1/namespaces/{ns}/experiments/{id}/report"}
	routes           = []route{routeHealth, routeReady, routeCreate, routeList, routeGet, routeEdit, routeDelete, routeRecall, routePredict, routeEngagement, routeMetrics, routeResurfacing, routeThresholds, routeNamespaces, routeJobs, routeJobRuns, routeJobRun, routeRelearn, routeDeleteNS, routeSettings, routePutSettings, routePatch, routeHistory,
		routeExperiments, routeExpCreate, routeExperiment, routeExpStop, routeExpReport}
)
