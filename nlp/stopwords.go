package nlp

// IsStopWord reports whether a lower-case token carries no topic of its own.
func IsStopWord(tok string) bool {
	_, ok := stopWords[tok]
	return ok
}

// stopWords is the classic English list (as in Lucene/NLTK) plus chat filler.
var stopWords = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, w := range []string{
		"a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are",
		"as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but",
		"by", "can", "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for",
		"from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself",
		"him", "himself", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself",
		"just", "me", "more", "most", "my", "myself", "no", "nor", "not", "now", "of", "off", "on",
		"once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own", "same",
		"she", "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them",
		"themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too",
		"under", "until", "up", "very", "was", "we", "were", "what", "when", "where", "which",
		"while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours",
		"yourself", "yourselves", "im", "ive", "id", "ill", "youre", "youve", "youll", "dont",
		"doesnt", "didnt", "isnt", "wasnt", "arent", "werent", "cant", "couldnt", "wouldnt",
		"shouldnt", "wont", "thats", "theres", "whats", "lets", "hes", "shes", "weve", "theyre",
		"also", "yeah", "yes", "oh", "ok", "okay", "hey", "hi", "hello", "really", "got", "get",
		"gets", "getting", "s", "t", "re", "ve", "ll", "d", "m",
	} {
		m[w] = struct{}{}
	}
	return m
}()
