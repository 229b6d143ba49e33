package nlp

// Word lists used by entity and keyword extraction. They are tuned on chat text (LoCoMo-style
// conversations), where sentences start with greetings and reactions far more often than
// with names.

// weakWords are frequent chat words that are not stop words but name no topic: a keyword
// must not be one, and a capitalized one at the start of a sentence is not an entity.
var weakWords = setOf(
	"lol", "lmao", "haha", "hahaha", "hehe", "omg", "wow", "aww", "awww", "ooh", "hmm", "yay",
	"thanks", "thank", "thx", "sorry", "please", "welcome", "bye", "goodbye", "cheers",
	"congrats", "congratulations", "sure", "yep", "nope", "nah", "alright", "right", "well",
	"good", "great", "nice", "cool", "awesome", "amazing", "wonderful", "fantastic", "lovely",
	"beautiful", "glad", "happy", "sad", "bad", "fine", "fun", "funny", "crazy", "exciting",
	"excited", "interesting", "incredible", "super", "totally", "definitely", "absolutely",
	"exactly", "actually", "honestly", "seriously", "literally", "probably", "maybe", "perhaps",
	"anyway", "anyways", "though", "still", "even", "ever", "never", "always", "sometimes",
	"often", "already", "almost", "quite", "pretty", "kind", "sort", "lot", "lots", "bit",
	"thing", "things", "stuff", "something", "anything", "everything", "nothing", "someone",
	"anyone", "everyone", "somebody", "anybody", "everybody", "nobody", "one", "ones", "way",
	"like", "likes", "liked", "love", "loved", "loves", "know", "knew", "known", "think",
	"thought", "thinking", "want", "wanted", "wants", "need", "needs", "needed", "make",
	"makes", "made", "making", "take", "takes", "took", "taken", "taking", "come", "comes",
	"came", "coming", "go", "goes", "went", "gone", "going", "see", "saw", "seen", "seeing",
	"look", "looks", "looked", "looking", "say", "says", "said", "tell", "told", "let",
	"keep", "kept", "give", "gave", "given", "put", "use", "used", "try", "tried", "trying",
	"feel", "feels", "felt", "seem", "seems", "seemed", "hope", "hoped", "hopefully", "wish",
	"mean", "means", "meant", "guess", "bet", "sounds", "sound", "agree", "true", "totally",
	"new", "old", "big", "little", "much", "many", "lots", "last", "next", "first", "second",
	"another", "every", "since", "yet", "ago", "today", "tonight", "tomorrow", "yesterday",
	"morning", "afternoon", "evening", "night", "week", "weekend", "month", "year", "day",
	"days", "time", "times", "gonna", "wanna", "gotta", "kinda", "sorta", "yup", "yea",
	"ya", "btw", "idk", "tbh", "imo", "hey", "hi", "hello", "oh", "ah", "uh", "um", "wait",
	"speaking", "talking", "anything", "whatever", "wherever", "however", "whoever",
	"besides", "also", "plus", "instead", "otherwise", "meanwhile", "finally", "recently",
	"lately", "especially", "usually", "really", "truly", "certainly", "clearly",
	"obviously", "luckily", "unfortunately", "sadly", "thankfully", "basically",
	"hopefully", "apparently", "yeah", "yes", "no", "ok", "okay", "dear", "buddy",
	"guys", "man", "dude", "folks",
	// Contractions Tokens writes without the apostrophe that the stop list lacks.
	"youd", "itll", "itd", "theyll", "theyve", "theyd", "thatll", "thatd", "whod", "wholl",
	"whos", "thered", "therell", "heres", "wheres", "hows", "whens", "whys", "aint",
	"couldve", "wouldve", "shouldve", "mightve", "mustve", "hasnt", "havent", "hadnt",
	"mustnt", "neednt", "shant", "yall", "itss", "everyones", "someones", "youll",
)

// sentenceStarters are words that open sentences in chat and are not names when
// capitalized there, beyond stop words and weakWords: question words, imperatives,
// reactions.
var sentenceStarters = setOf(
	"did", "does", "do", "is", "are", "was", "were", "have", "has", "had", "can", "could",
	"would", "should", "will", "shall", "may", "might", "must", "let's", "lets", "that's",
	"it's", "i'm", "i've", "i'd", "i'll", "you're", "you've", "what's", "how's", "where's",
	"who's", "here's", "there's", "check", "remember", "imagine", "guess", "listen", "look",
	"wish", "hope", "enjoy", "stay", "take", "keep", "good", "great", "nice", "wow", "yay",
	"anyway", "sounds", "looks", "seems", "any", "anything", "everything", "something",
	"nothing", "someone", "both", "either", "neither", "many", "much", "most", "some",
	"sometimes", "yesterday", "today", "tomorrow", "tonight", "last", "next", "this",
	"that", "these", "those", "my", "our", "your", "their", "his", "her", "its", "it",
	"being", "having", "getting", "went", "got", "made", "saw", "love", "loved", "like",
	"liked", "thanks", "thank", "sorry", "congrats", "congratulations", "definitely",
	"absolutely", "totally", "exactly", "awesome", "cool", "amazing", "agreed", "true",
	"right", "glad", "happy", "aw", "aww", "oh", "ah", "ha", "haha", "lol", "omg", "hmm",
	"yup", "yep", "nope", "sure", "so", "well", "plus", "also", "and", "but", "or", "yet",
	"still", "even", "once", "when", "while", "after", "before", "since", "because",
	"although", "though", "if", "unless", "until", "as", "like", "just", "only", "not",
	"no", "never", "always", "maybe", "perhaps", "please", "bye", "see", "talk", "catch",
	"take", "have", "what", "how", "why", "where", "who", "which", "whose", "hey", "hi",
	"hello", "dear", "welcome", "cheers", "oops", "ugh", "wait", "speaking", "talking",
	"btw", "by", "for", "with", "without", "about", "from", "into", "at", "on", "in",
	"to", "of", "up", "over", "under", "again", "too", "very", "really", "all", "each",
	"every", "few", "more", "other", "such", "own", "same", "than", "then", "there",
	"here", "now", "once", "one", "two", "three", "first", "second", "finally", "lastly",
	"also", "besides", "however", "instead", "otherwise", "meanwhile", "actually",
	"honestly", "seriously", "apparently", "luckily", "unfortunately", "sadly",
	"hopefully", "fortunately", "interestingly", "especially", "mostly", "usually",
	"recently", "lately", "anyway", "anyways", "okay", "ok", "yeah", "yes", "yea", "hopefully",
	"woah", "whoa", "woohoo", "woo", "woo-hoo", "oof", "ouch", "phew", "yum", "mmm", "mm",
	"dang", "bummer", "gotcha", "kudos", "lemme", "looky", "hah", "ahh", "ahhh", "anytime",
	"yo", "whenever", "wherever", "overall", "long", "later", "soon", "enough", "together",
	"best", "better", "hard", "tough", "busy", "lucky", "cute", "perfect", "impressive",
	"believe", "reminds", "fyi", "btw", "jealous", "somewhat", "everywhere", "mine",
)

// interjections are never part of an entity, wherever they stand ("Yo Tim, Woohoo Mel").
var interjections = setOf(
	"hey", "hi", "hello", "wow", "woah", "whoa", "woohoo", "woo", "woo-hoo", "yay", "oh", "ah",
	"ahh", "aww", "awww", "lol", "lmao", "haha", "hahaha", "hehe", "hah", "omg", "thanks",
	"thank", "thx", "yo", "hmm", "oops", "ugh", "ouch", "oof", "phew", "yum", "mmm", "dang",
	"bummer", "gotcha", "kudos", "congrats", "congratulations", "yeah", "yep", "yup", "nope",
	"nah", "ok", "okay", "btw", "fyi", "cheers", "bye", "sorry", "please",
)

// months maps month names and their common abbreviations to their number. Abbreviations
// and "may" need a number or "in" beside them to count (see temporal.go).
var months = map[string]int{
	"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
	"august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
	"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9,
	"sept": 9, "oct": 10, "nov": 11, "dec": 12,
}

// weekdays maps weekday names (and abbreviations) to time.Weekday numbers (Sunday = 0).
var weekdays = map[string]int{
	"sunday": 0, "monday": 1, "tuesday": 2, "wednesday": 3, "thursday": 4, "friday": 5,
	"saturday": 6, "sun": 0, "mon": 1, "tue": 2, "tues": 2, "wed": 3, "thu": 4, "thur": 4,
	"thurs": 4, "fri": 5, "sat": 6,
}

func setOf(words ...string) map[string]struct{} {
	m := make(map[string]struct{}, len(words))
	for _, w := range words {
		m[w] = struct{}{}
	}
	return m
}

func in(set map[string]struct{}, w string) bool {
	_, ok := set[w]
	return ok
}
