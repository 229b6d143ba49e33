package server_test

// The scripted conversation of TestScriptedConversation: Ines tells her friend Theo (the
// bot, role assistant) about her week over one evening, mostly small talk. Some lines state
// a fact (States); a few facts change later (the Iceland flight moves, she changes jobs,
// the book club picks another book). Needs lists the facts a line refers back to — what a
// bot writing or answering that line would want recall to have put in front of it. A need
// is always a fact stated outside the last three messages, which the bot has in view
// anyway. The words are our own, written for this test.

// scriptLine is one message of the conversation.
type scriptLine struct {
	Speaker string   // "Ines" (role user) or "Theo" (role assistant)
	Text    string   // what is said, stored as a turn
	States  string   // the fact this line states, if any
	Needs   []string // facts stated earlier that this line refers back to
}

// scriptQuestion is one of the direct questions Ines asks the next morning, and the fact
// whose line answers it (the latest version, when the fact changed).
type scriptQuestion struct {
	Text, Answer string
}

var script = []scriptLine{
	{Speaker: "Ines", Text: "Evening Theo! Finally home, the bus crawled through the rain again."},
	{Speaker: "Theo", Text: "Evening! The forecast says rain until Sunday. Did you at least get a seat?"},
	{Speaker: "Ines", Text: "Standing the whole way, after a twelve-hour night shift on the cardiac ward at St. Anne's, where I work as a nurse.", States: "job-nurse"},
	{Speaker: "Theo", Text: "Oof. Put your feet up. What's for dinner tonight?"},
	{Speaker: "Ines", Text: "Just toast. I have to be careful with the new granola too: I'm allergic to peanuts and half the brands sneak them in.", States: "allergy"},
	{Speaker: "Theo", Text: "Good call reading the labels. Anything fun coming up?"},
	{Speaker: "Ines", Text: "Yes! I booked a trip to Iceland with my cousin, flying out on the 14th of March.", States: "iceland-march"},
	{Speaker: "Theo", Text: "How exciting. Who keeps an eye on the flat while you're away?"},
	{Speaker: "Ines", Text: "My neighbour Mrs. Okafor waters my plants whenever I travel, she's a saint.", States: "plants"},
	{Speaker: "Theo", Text: "Everyone needs a neighbour like that. And what about your little reptile?"},
	{Speaker: "Ines", Text: "Gus, my tortoise, stays at her place too. He adores her balcony tomatoes.", States: "tortoise"},
	{Speaker: "Theo", Text: "A tortoise with taste. Did you catch the match last night?"},
	{Speaker: "Ines", Text: "No, I fell asleep on the sofa before nine. Who won?"},
	{Speaker: "Theo", Text: "No idea either, I only saw the penalty drama in the highlights."},
	{Speaker: "Ines", Text: "Classic. Oh, my brother Mateo is getting married in Porto on the 21st of August!", States: "wedding"},
	{Speaker: "Theo", Text: "Congratulations to him! Are you giving a speech?"},
	{Speaker: "Ines", Text: "Maybe, if I survive learning the cello first. My lessons with Mr. Adebayo are every Thursday evening.", States: "cello"},
	{Speaker: "Theo", Text: "The cello, how lovely. How long have you been playing?"},
	{Speaker: "Ines", Text: "Four months now, and the people downstairs have been very patient."},
	{Speaker: "Theo", Text: "Patient neighbours again. Does the lady who waters your plants come to your recitals too?", Needs: []string{"plants"}},
	{Speaker: "Ines", Text: "Ha, not yet. Money is tight anyway: the landlord just raised my rent to 950 euros a month.", States: "rent"},
	{Speaker: "Theo", Text: "That's steep. Is the view at least worth it?"},
	{Speaker: "Ines", Text: "The view of the car park, you mean. At least Olive, my old green Fiat Panda, fits in the corner spot.", States: "car"},
	{Speaker: "Theo", Text: "Still starting on the first try?"},
	{Speaker: "Ines", Text: "Mostly. And the book club picked The Remains of the Day for this month, we meet on the first Sunday.", States: "book-remains"},
	{Speaker: "Theo", Text: "Good choice. You could read it on the train to Porto for your brother's wedding.", Needs: []string{"wedding"}},
	{Speaker: "Ines", Text: "Bad news from the airline: the flights moved because of the volcano warnings, so now we fly on the 2nd of May.", States: "iceland-may"},
	{Speaker: "Theo", Text: "Oh no, so no trip with your cousin in March after all. May should be milder at least.", Needs: []string{"iceland-march"}},
	{Speaker: "Ines", Text: "And bigger news: I handed in my notice. From June I work at the dental clinic on Harbour Street, day shifts only!", States: "job-dental"},
	{Speaker: "Theo", Text: "No more nights on the cardiac ward at the hospital! That's huge.", Needs: []string{"job-nurse"}},
	{Speaker: "Ines", Text: "I know. Maybe I'll finally have the energy to practise the cello in the evenings.", Needs: []string{"cello"}},
	{Speaker: "Theo", Text: "And you can drive the old Panda to the pub quiz instead of taking the bus.", Needs: []string{"car"}},
	{Speaker: "Ines", Text: "True. Speaking of the quiz, what should I cook for the team on Friday?"},
	{Speaker: "Theo", Text: "Something without peanuts, for your sake. A big tray of roast vegetables?", Needs: []string{"allergy"}},
	{Speaker: "Ines", Text: "Perfect. Also the club finished that butler novel early, so next month we're reading Piranesi instead.", States: "book-piranesi", Needs: []string{"book-remains"}},
	{Speaker: "Theo", Text: "Piranesi is wonderful, you'll fly through it."},
	{Speaker: "Ines", Text: "Let's hope so. I'm training for the Riverside half marathon on the 9th of October, so reading time is running time.", States: "race"},
	{Speaker: "Theo", Text: "Running and reading, the dream. Good night Ines, and say hi to the tortoise from me.", Needs: []string{"tortoise"}},
	{Speaker: "Ines", Text: "Good night! Now to work out whether the clinic's pay covers that rent.", Needs: []string{"rent", "job-dental"}},
}

var scriptQuestions = []scriptQuestion{
	{Text: "When is my Iceland trip now?", Answer: "iceland-may"},
	{Text: "Where will I be working from June?", Answer: "job-dental"},
	{Text: "When is Mateo's wedding?", Answer: "wedding"},
	{Text: "What is my tortoise called?", Answer: "tortoise"},
	{Text: "What am I allergic to?", Answer: "allergy"},
	{Text: "Who waters my plants when I travel?", Answer: "plants"},
	{Text: "Which book is the book club reading next?", Answer: "book-piranesi"},
	{Text: "How much is my rent now?", Answer: "rent"},
	{Text: "What day are my cello lessons?", Answer: "cello"},
	{Text: "When is the Riverside half marathon?", Answer: "race"},
}
