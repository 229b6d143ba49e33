package models

// A namespace's state outside its rows lives in the store's state keys, each one of these
// kinds followed by the namespace: kind+ns, or kind+ns+"/"+more (a namespace name holds no
// '/'). Every package that keeps a namespace's state under a key builds the key from one of
// them, so that DeleteNamespace finds all of it.
const (
	LearnKeyPrefix         = "learn/model/"    // the relevance model (learn.Key)
	BanditKeyPrefix        = "bandit/"         // the threshold bandit's posteriors (predict.StateKey)
	SettingsAuditKeyPrefix = "settings-audit/" // the settings' audit trail
	LegacyPolicyKeyPrefix  = "policy/"         // the decay policy before settings existed
	// SettingsKeyPrefix (settings.go) and ExperimentKeyPrefix (experiment.go) too.
)

// NamespaceStateKinds lists the kinds of state key that hold a namespace's state.
func NamespaceStateKinds() []string {
	return []string{LearnKeyPrefix, BanditKeyPrefix, SettingsKeyPrefix, SettingsAuditKeyPrefix,
		LegacyPolicyKeyPrefix, ExperimentKeyPrefix}
}

// NamespaceOwnsKey reports whether state key belongs to namespace ns: it is a
// NamespaceStateKinds kind followed by ns, alone or followed by "/" and more.
func NamespaceOwnsKey(ns, key string) bool {
	for _, k := range NamespaceStateKinds() {
		if len(key) < len(k)+len(ns) || key[:len(k)] != k || key[len(k):len(k)+len(ns)] != ns {
			continue
		}
		if rest := key[len(k)+len(ns):]; rest == "" || rest[0] == '/' {
			return true
		}
	}
	return false
}

// NamespaceKeys is where namespace ns's state keys of one kind lie, for a store to delete:
// key itself and every key from lo up to (not including) hi, key+"/" and key+"0" ('0'
// follows '/'), which are the keys NamespaceOwnsKey gives ns.
func NamespaceKeys(kind, ns string) (key, lo, hi string) {
	key = kind + ns
	return key, key + "/", key + "0"
}

// NamespaceDeleted is what DeleteNamespace deleted.
type NamespaceDeleted struct {
	// Memories counts the memories, their chunks included.
	Memories int `json:"memories"`
	// Records counts everything deleted, the memories included: rows in the embedded store,
	// nodes in Neo4j (edges go with their nodes and are not counted there).
	Records int `json:"records"`
}
