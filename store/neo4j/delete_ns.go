package neo4j

import (
	"context"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/salience-ai/salience/models"
)

// The labels whose nodes carry a namespace, in the order DeleteNamespace deletes them, with
// their queries (constants: TestCypherIsConstant). Memories go first, to be counted (their
// chunks are :Memory too); :Node then takes the concepts; :Term, the text statistics, counts
// among no records; the :Space, which holds the
// namespace's embedding size and counters, goes last. TestNeo4j/DeleteNamespaceLeavesNothing
// checks that no node of the namespace is left under any label.
var (
	deleteNSLabels = []string{"Memory", "Node", "Surfacing", "Event", "Decision", "Conversation",
		"QueueItem", "Experiment", "UpdateLock", "Term", "Space"}
	deleteNSBatch = map[string]string{
		"Memory":       `MATCH (n:Memory {ns: $ns}) WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS n`,
		"Node":         `MATCH (n:Node {ns: $ns}) WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS n`,
		"Surfacing":    `MATCH (n:Surfacing {ns: $ns}) WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS n`,
		"Event":        `MATCH (n:Event {ns: $ns}) WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS n`,
		"Decision":     `MATCH (n:Decision {ns: $ns}) WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS n`,
		"Conversation": `MATCH (n:Conversation {ns: $ns}) WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS n`,
		"QueueItem":    `MATCH (n:QueueItem {ns: $ns}) WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS n`,
		"Experiment":   `MATCH (n:Experiment {ns: $ns}) WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS n`,
		"UpdateLock":   `MATCH (n:UpdateLock {ns: $ns}) WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS n`,
		"Term":         `MATCH (n:Term {ns: $ns}) WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS n`,
		"Space":        `MATCH (n:Space {ns: $ns}) WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS n`,
	}
)

// deleteNSState deletes one kind of the namespace's state keys (models.NamespaceKeys).
const deleteNSState = `MATCH (n:State) WHERE n.key = $key OR (n.key >= $lo AND n.key < $hi)
	DETACH DELETE n RETURN count(*) AS n`

// DeleteNamespace deletes every node of ns, label by label (deleteNSLabels), pruneBatch
// nodes a transaction, with their relationships, and then the state keys ns owns.
func (s *Store) DeleteNamespace(ctx context.Context, ns string) (models.NamespaceDeleted, error) {
	var d models.NamespaceDeleted
	if err := models.ValidateNamespace(ns); err != nil {
		return d, err
	}
	params := map[string]any{"ns": ns, "batch": int64(pruneBatch)}
	for _, label := range deleteNSLabels {
		for {
			var n int64
			err := s.write(ctx, "delete namespace", func(tx neo4j.ManagedTransaction) error {
				recs, err := collect(ctx, tx, deleteNSBatch[label], params)
				if err == nil && len(recs) == 1 {
					n, _ = recs[0].Values[0].(int64)
				}
				return err
			})
			if err != nil {
				return d, err
			}
			if label == "Memory" {
				d.Memories += int(n)
			}
			if label != "Term" { // the text index's statistics (bm25.go), not records
				d.Records += int(n)
			}
			if n < int64(pruneBatch) {
				break
			}
		}
	}
	for _, kind := range models.NamespaceStateKinds() {
		key, lo, hi := models.NamespaceKeys(kind, ns)
		err := s.write(ctx, "delete namespace state", func(tx neo4j.ManagedTransaction) error {
			recs, err := collect(ctx, tx, deleteNSState, map[string]any{"key": key, "lo": lo, "hi": hi})
			if err == nil && len(recs) == 1 {
				n, _ := recs[0].Values[0].(int64)
				d.Records += int(n)
			}
			return err
		})
		if err != nil {
			return d, err
		}
	}
	return d, nil
}
