package graph

import (
	"context"
	"fmt"
	"slices"
)

// Distances returns the hop count from the nearest of the from nodes to every node within
// maxHops edges (breadth-first, unweighted, edges followed both ways); the from nodes
// themselves are at 0. It calls next once per hop with that hop's new nodes. maxHops ≤ 0
// returns the from nodes only.
//
// Recall turns a distance d into the proximity feature 1/(1+d) (docs/design.md#score).
func Distances(ctx context.Context, from []string, next NeighborFunc, maxHops int) (map[string]int, error) {
	dist := make(map[string]int, len(from))
	var frontier []string
	for _, id := range from {
		if _, ok := dist[id]; !ok {
			dist[id] = 0
			frontier = append(frontier, id)
		}
	}
	for hop := 1; hop <= maxHops && len(frontier) > 0; hop++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		slices.Sort(frontier)
		edges, err := next(ctx, frontier)
		if err != nil {
			return nil, fmt.Errorf("graph: neighbors at hop %d: %w", hop, err)
		}
		inFrontier := make(map[string]bool, len(frontier))
		for _, id := range frontier {
			inFrontier[id] = true
		}
		var nextFrontier []string
		reach := func(id string) {
			if _, ok := dist[id]; !ok {
				dist[id] = hop
				nextFrontier = append(nextFrontier, id)
			}
		}
		for _, e := range edges {
			if e == nil {
				continue
			}
			if inFrontier[e.From] {
				reach(e.To)
			}
			if inFrontier[e.To] {
				reach(e.From)
			}
		}
		frontier = nextFrontier
	}
	return dist, nil
}
