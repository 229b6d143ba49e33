package nlp

// IsFiller reports whether an analysed term (an element of Terms' output: lower-case,
// stemmed) is filler: the stem of a stop word or of a weak chat word (weakWords), frequent in
// any conversation and naming no topic. Terms drops stop words before stemming; a stem can
// still equal one ("one" → "on"), so both lists are checked stemmed.
func IsFiller(term string) bool {
	_, ok := fillerStems[term]
	return ok
}

var fillerStems = func() map[string]struct{} {
	m := make(map[string]struct{}, len(stopWords)+len(weakWords))
	for _, set := range []map[string]struct{}{stopWords, weakWords} {
		for w := range set {
			m[Stem(w)] = struct{}{}
		}
	}
	return m
}()
