//go:build !unix

package main

// lockData takes no lock where flock is missing: there, nothing stops reembed from running
// beside a server, and the operator must stop the server first (docs/rerank.md).
func lockData(dir string, exclusive bool) (unlock func(), err error) {
	return func() {}, nil
}
