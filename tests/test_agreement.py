"""Two system answers compared by what each says (``mortar.oracle.agreement``), and how the relations that compare
two answers (MR3, MR4, DT-INV) carry the outcome: agree, differ, or no answer (neither answers the question)."""

import pytest

from mortar.dataset import Round, Seed, TestCase
from mortar.execute import Answer
from mortar.judge import judge
from mortar.methods import methods
from mortar.oracle import Oracle
from mortar.oracle.agreement import AGREE, DIFFER, NO_ANSWER, without_loop
from mortar.relations import RELATIONS, Judging
from mortar.reports import report
from mortar.verdict import ECVerdict
from mortar.vocab import DT_INV, ORIG

STORY = ("The Riverside chess club met on Thursday in the library. Its best player, Omar Haddad, won all five of "
         "his games and took the trophy home. The club's treasurer, Lena Vogt, said they had raised 240 euros for "
         "new boards. Nobody from the rival Hillcrest club came. The last match was stopped when the hall flooded, "
         "and spills went down the drain. Members park behind the hall in the long-stay car park; the tenant of the "
         "flat above signed the lease. Visitors bring sturdy boots and a flask. A local carpenter repaired the roof.")


@pytest.fixture(scope="module")
def oracle():
    return Oracle("answer")


def outcome(oracle, question, a, b):
    agreed = oracle.compare(question, a, b, STORY)
    assert agreed.outcome(oracle.threshold) == oracle.compare(question, b, a, STORY).outcome(oracle.threshold)
    return agreed.outcome(oracle.threshold)


@pytest.mark.parametrize("question, a, b, expected", [
    # the same name in different sentences
    ("Who won the trophy?", "Omar Haddad took it home.", "It was Haddad, the club's best player.", AGREE),
    ("Who won the trophy?", "Omar Haddad.", "Lena Vogt won it.", DIFFER),
    # the same number in other words and units; a different number
    ("How much money did they raise?", "240 euros", "They raised two hundred and forty euros.", AGREE),
    ("How much money did they raise?", "240 euros", "140 euros", DIFFER),
    ("How many games did Omar win?", "five", "He won all 5 games.", AGREE),
    # yes/no said differently
    ("Did anyone from Hillcrest come?", "No.", "Nobody from Hillcrest turned up.", AGREE),
    ("Did anyone from Hillcrest come?", "No, nobody came.", "Yes, two players came.", DIFFER),
    # a verb that says it did not happen is a no, unless the question asks about that verb
    ("Did Omar agree to play again?", "He declined for now.", "No, he said he would think about it.", AGREE),
    ("Did Omar win the last game?", "He lost it.", "Yes, he won.", DIFFER),
    ("Did Lena refuse the money?", "She refused it.", "Yes.", AGREE),
    # both wrong in the same way agree
    ("Where did the club meet?", "In the school hall.", "They met in the school hall.", AGREE),
    # lists in another order
    ("What did Omar do?", "He won five games and took the trophy home.", "He took the trophy home after winning "
     "five games.", AGREE),
    # two non-answers of different content: no answer, not "the same answer"
    ("Who is the treasurer?", "I don't know.", "The text does not say who the treasurer is.", NO_ANSWER),
    ("Who is the treasurer?", "The treasurer is the treasurer.", "Unknown.", NO_ANSWER),
    ("How much money did they raise?", "money money money money money money money", "I am not sure.", NO_ANSWER),
    # one non-answer against an answer: they differ
    ("Who is the treasurer?", "I don't know.", "Lena Vogt.", DIFFER),
    ("Who is the treasurer?", "qwzx plorf vhtk mmnq", "Lena Vogt.", DIFFER),
    # a non-answer said again inside a longer one: the longer one does not answer either
    ("What did Omar win?", "Omar won.", "The club met on Thursday in the library. Omar won.", NO_ANSWER),
    # refusals and a document named by what it is say nothing
    ("Who is the treasurer?", "Sorry, I can't help with that request.", "The report doesn't name a treasurer.",
     NO_ANSWER),
    ("Who is the treasurer?", "I'm sorry, I don't have that information.", "Lena Vogt.", DIFFER),
    # a telephone number or a price says no time; a telephone number answers where one is asked
    ("When must swaps be sent?", "Colm's number is 07700 451 203.", "Message Colm or use the group chat.", NO_ANSWER),
    ("When is basketing for the next race?", "Entry is £1.50 per bird.", "The next race is from Tours.", NO_ANSWER),
    ("What number should members call?", "Call the club on 0345 600 2291.", "0345 600 2291", AGREE),
    # one of a group is no particular one to 'who' or 'which'; one of a named group is
    ("Who won the trophy?", "One of the club's best players.", "I'm not sure who won it.", NO_ANSWER),
    ("Who repaired the roof?", "A member of the club.", "Someone from the village, one of the carpenters.", NO_ANSWER),
    ("Who won the trophy?", "One of the Haddad brothers.", "I'm not sure who won it.", DIFFER),
    # to 'how long' or 'how far' a number answers with a unit of time or length
    ("How long has Omar played for the club?", "He won a 180 in the first game.", "He is the best player.",
     NO_ANSWER),
    ("How far is the library from the hall?", "It opens at 09:15.", "It is in the town.", NO_ANSWER),
    ("How long did the meeting last?", "Two hours.", "I'm not sure.", DIFFER),
    ("How long has Lena been treasurer?", "Since 2019.", "I'm not sure.", DIFFER),
    ("How long has Lena been treasurer?", "Three seasons.", "I'm not sure.", DIFFER),
    ("How long do the boards last?", "They are kept at 27 Quayside Terrace.", "I'm not sure.", NO_ANSWER),
    # a reason answers 'why' only; a time does not ('after 1791')
    ("What did the carpenter repair?", "Because the hall flooded.", "I am not sure.", NO_ANSWER),
    ("Why was the last match stopped?", "It happened some time after 2019.", "It was the last match of the year.",
     NO_ANSWER),
    ("Why was the last match stopped?", "The hall flooded.", "The club never says.", DIFFER),
    # a capital letter names one of several ('Car Park C')
    ("Which car park do members use?", "Car Park C.", "Car Park C. Car Park C. Car Park C. Car Park C.", AGREE),
    ("Which car park do members use?", "Car Park C.", "I am not sure.", DIFFER),
    # 'one' in a reply of a few words is a count
    ("How many games did Omar lose?", "Just one.", "That's a really good question - ask the club's captain!", DIFFER),
    # part of a list said plainly ('A, B and C') differs; a description or a second clause is no list
    ("What must members do after a match?", "Put the boards away.", "Put the boards away, wash the cups and lock "
     "the hall.", DIFFER),
    ("What colours are the new boards?", "Black and red.", "Black.", DIFFER),
    ("Who is the treasurer?", "Lena Vogt.", "Lena Vogt, who counts the money and keeps the books.", AGREE),
    ("Who won the trophy?", "Omar Haddad.", "Omar Haddad won it, and the club cheered for an hour.", AGREE),
    # talk about things in general says nothing of the story's; a general question takes a general answer
    ("Where did the club meet?", "Chess clubs often meet in pubs and libraries.", "I am not sure.", NO_ANSWER),
    ("What did the carpenter repair?", "Great question! Carpenters can fix almost anything.", "Roofs can leak in "
     "the rain.", NO_ANSWER),
    ("What do members bring?", "Members bring sturdy boots.", "I am not sure.", DIFFER),
    ("Which boards are not allowed?", "The boards not allowed are the boards not allowed are the boards",
     "I am not sure.", NO_ANSWER),
    # 'another' place is not which one
    ("Where did the club meet?", "They met at another hall.", "I am not sure.", NO_ANSWER),
    ("Where did the club meet?", "In the library.", "I am not sure.", DIFFER),
    # a count question answered on its topic without a number; a number in units the other does not use
    ("How many boards did they buy?", "They bought boards for the club.", "The text does not say.", NO_ANSWER),
    ("How long did the meeting last?", "1 hour 45 minutes", "105 minutes", AGREE),
    ("How long will the boards be on loan?", "For two weeks.", "For the next fortnight.", AGREE),
    # what is counted is the plural after an adjective
    ("How many boards did they buy?", "A dozen new boards.", "They bought 12 boards.", AGREE),
    # a rate said two ways
    ("How often does the club meet?", "Once a fortnight.", "Every two weeks, in the library.", AGREE),
    ("How often does the club meet?", "Every Thursday.", "Twice a week.", DIFFER),
    ("How much juice was left?", "half a litre", "500 ml", AGREE),
    ("What was the temperature in the library?", "19 °C", "Nineteen degrees Celsius.", AGREE),
    # talk about the text, a deferral, a label with nothing after it, a tautology after filler: no answer
    ("Who is the treasurer?", "The report mentions the treasurer.", "Please check with the club's office.",
     NO_ANSWER),
    ("Who is the treasurer?", "Treasurer:", "Hmm, let me think. The treasurer is the treasurer.", NO_ANSWER),
    ("How many boards did they buy?", "A lot of boards were bought.", "Some boards.", NO_ANSWER),  # no amount
    ("How many boards did they buy?", "None.", "They bought zero boards.", AGREE),
    ("How many boards did they buy?", "The shop down the road sells toys.", "I am not sure.", NO_ANSWER),
    ("How many boards did they buy?", "They sent boards all across the county.", "Red means red.", NO_ANSWER),
    ("What did the club buy?", "Sure! Here is the answer:", "I'm sorry, I don't understand the question.", NO_ANSWER),
    ("When will the boards arrive?", "Sometime soon, I think.", "The boards will arrive in due course.", NO_ANSWER),
    ("When will the boards arrive?", "Sometime soon, I think.", "On Friday.", DIFFER),
    # numbers in words with a comma, money with a scale letter or in two parts, a fraction of a unit
    ("How much money did they raise?", "£2.4m", "2.4 million pounds", AGREE),
    ("How much did the tea cost?", "two euros fifty", "€2.50", AGREE),
    ("How many people came?", "Twelve thousand, three hundred and four.", "12304 people", AGREE),
    ("How long did the game last?", "three quarters of an hour", "45 minutes", AGREE),
    # a list against a part of it differs; a paraphrase of the list is no part
    ("Why was the match stopped?", "For bad light and a fire alarm.", "For bad light.", DIFFER),
    ("What did Omar bring?", "A flask, sandwiches or biscuits.", "Sandwiches.", DIFFER),
    ("What did the club buy?", "New boards, clocks and score sheets.", "Boards and clocks and score sheets.", AGREE),
    # an indefinite and what modifies it name nobody; a conditional that never says on what is no answer either
    ("Who is the treasurer?", "Probably someone in the club.", "It depends on which year you mean.", NO_ANSWER),
    ("Who is the treasurer?", "Someone who looks after the money.", "Lena Vogt.", DIFFER),
    ("Who is the treasurer?", "Someone called Lena Vogt.", "Lena Vogt.", AGREE),
    ("How much money did they raise?", "The amount is not given.", "It depends, but about 240 euros.", DIFFER),
    # to 'when', 'how long', 'where' and 'what colour', an answer with no time, amount, place or colour gives nothing
    ("When did the club meet?", "The club met to play chess.", "It took a while.", NO_ANSWER),
    ("When did the club meet?", "The club met to play chess.", "On Thursday.", DIFFER),
    # a part of the day or year, hedged, is no time ('Late in the evening.')
    ("When did the last match stop?", "I can't say.", "Late in the evening.", NO_ANSWER),
    ("When did the last match stop?", "I can't say.", "At half past nine in the evening.", DIFFER),
    ("How long did the games last?", "After the library closed.", "Until the library closed.", AGREE),
    ("Where did the club meet?", "The club is very friendly.", "The meeting was about new boards.", NO_ANSWER),
    ("What colour are the new boards?", "The boards are made of wood.", "Amber.", DIFFER),
    # to 'who', an answer with no name and no noun for someone or some group names nobody
    ("Who is the treasurer?", "The treasurer was at the library all evening.", "I don't know.", NO_ANSWER),
    ("Who won the trophy?", "The trophy went home that night.", "The club's best player won it.", DIFFER),
    # a thing said to be itself, whatever follows; a hedge that still gives the amount
    ("Who is the treasurer?", "The treasurer is the treasurer of the Riverside club.",
     "That's not something I can tell from the story.", NO_ANSWER),
    ("How much money did they raise?", "I'm not certain, but I think 240 euros.", "240 euros", AGREE),
    # a place is no answer to 'who'; a list against only part of it differs
    ("Who won the trophy?", "Omar Haddad.", "The best player won it in the library at Riverside.", DIFFER),
    ("Who spoke at the meeting?", "Omar Haddad and Lena Vogt.", "Lena Vogt and Omar Haddad.", AGREE),
    ("Who spoke at the meeting?", "Omar Haddad and Lena Vogt.", "Lena Vogt.", DIFFER),
    # a figure asked for by its noun; a time asked with 'since when'; 'some things' names nothing
    ("What is the club's phone number?", "It is on the club's website.", "The number is easy to find.", NO_ANSWER),
    ("What is the club's phone number?", "It is on the club's website.", "01632 960 118", DIFFER),
    ("Since when has the club met in the library?", "The club meets in the library.", "It is a friendly club.",
     NO_ANSWER),
    ("What did the club buy?", "Some things for the new season.", "Lots of useful things.", NO_ANSWER),
    # 'what time' wants a time of day, 'how long' a span; 'not … at all' counts nothing
    ("What time did the club meet?", "It met in the evening, in the library.", "On the 97.4 FM bus route.", NO_ANSWER),
    ("What time did the club meet?", "It met in the evening, in the library.", "At half past seven.", DIFFER),
    ("What time did the club meet?", "At seven.", "At 7 pm.", AGREE),
    ("How long did the meeting last?", "The meeting is over now.", "It has finished.", NO_ANSWER),
    ("Since when has the club met there?", "It meets in the library.", "It does not meet anywhere else at all.",
     NO_ANSWER),
    # where the text says it instead of what it says; what someone needs, unnamed; people counted as people
    ("How much did they raise?", "The amount is given in the treasurer's report.", "Lena Vogt raised it.", NO_ANSWER),
    ("What should members bring?", "Members should bring what they need.", "Nothing is said about it.", NO_ANSWER),
    ("How many players came?", "Twelve players in two teams.", "12 people.", AGREE),
    ("How many players came?", "Twelve players in two teams.", "12 tables.", DIFFER),
    ("Who is the treasurer?", "The name of the Riverside chess club treasurer is the treasurer.", "I can't say.",
     NO_ANSWER),
    # a time is no place; 'whose' asks for someone
    ("Where did the club meet?", "It met from 7:30 p.m. on Thursday.", "The club meets weekly.", NO_ANSWER),
    ("Where did the club meet?", "It met from 7:30 p.m. on Thursday.", "At 5 Mill Lane.", DIFFER),
    ("Whose trophy was it?", "The trophy was silver and heavy.", "I can't say.", NO_ANSWER),
    # a question that asks for two names, one answer that gives one of them
    ("Which two players won their games?", "Omar Haddad and Lena Vogt.", "Lena Vogt.", DIFFER),
    ("Which two players won their games?", "Omar Haddad and Lena Vogt.", "Lena Vogt and Omar.", AGREE),
    # a date names nobody
    ("Who is the treasurer?", "The treasurer joined on 3 April.", "I can't say.", NO_ANSWER),
    # someone named only by what the question asks of them
    ("Who won the trophy?", "The trophy was won by the player who won the trophy.", "I can't say.", NO_ANSWER),
    ("Who won the trophy?", "The trophy was won by the player who won all five games.", "I can't say.", DIFFER),
    # a wh-word inside a yes/no question asks nothing; '½' is a half
    ("Was the player who won hurt?", "No, he said he was fine.", "He wasn't hurt at all.", AGREE),
    ("How much did each player pay?", "Half a euro.", "½ euro each.", AGREE),
    # the day in both, a time in one; free said as costing nothing
    ("When did the club meet?", "Thursday 9 May, from 7 pm to 9 pm.", "On Thursday the 9th of May.", AGREE),
    ("When did the club meet?", "Thursday 9 May, from 7 pm to 9 pm.", "On Thursday the 16th of May.", DIFFER),
    ("Is the library free for the club?", "The room costs nothing to book.", "Yes, it's free.", AGREE),
    ("Is the library free for the club?", "It isn't free: the room costs 20 euros.", "Yes, it's free.", DIFFER),
    # a word the question writes in lower case is no name at the head of a sentence; what an answer sets aside is no
    # item of its list
    ("Who leads the chess club?", "Chess club meets at 7 pm.", "I can't say.", NO_ANSWER),
    ("Who leads the chess club?", "Omar Haddad leads it.", "Chess club meets at 7 pm.", DIFFER),
    # to 'why', an answer that says the question's event again and no reason gives nothing
    ("Why was the chess match stopped?", "I can't say.", "The match was stopped in the second hour.", NO_ANSWER),
    ("Why was the chess match stopped?", "I can't say.", "The match was stopped because the hall flooded.", DIFFER),
    ("Why was the chess match stopped?", "I can't say.", "The hall flooded.", DIFFER),
    # to 'when', a number that is no time, or the question's own time words, say nothing of when
    ("When must the hall be booked?", "I can't say.", "The hall is room one of the club.", NO_ANSWER),
    ("When must the hall be booked?", "I can't say.", "By the twentieth.", DIFFER),
    ("When is the final this year?", "I can't say.", "It is this year, as it is every year.", NO_ANSWER),
    ("When was the club founded?", "1990", "In nineteen ninety.", AGREE),
    # advice answers nothing; a quantifier is no time; a lone preposition or "It's" is no name; where the text says it
    ("Where can members park?", "I can't say.", "Parking is nearby; it's best to check locally.", NO_ANSWER),
    ("Where can members park?", "I can't say.", "Behind the hall; it's best to come early.", DIFFER),
    ("When is the open day?", "I can't say.", "Soon, and it's free for all members.", NO_ANSWER),
    ("Who keeps the key?", "I can't say.", "At 19:00.", NO_ANSWER),
    ("Who keeps the key?", "I can't say.", "It's always best to stay safe.", NO_ANSWER),
    ("Who keeps the key?", "It says in the newsletter.", "I can't say.", NO_ANSWER),
    # a bare number's loop beside an answer that gives it; a quarter of a million; free said with a negation
    ("How much was the chess set?", "The set was £40, paid on the night.", "£40 £40 £40 £40 £40 £40 £40", AGREE),
    ("How much was the chess set?", "The set was £45, paid on the night.", "£40 £40 £40 £40 £40 £40 £40", DIFFER),
    ("How many visitors came?", "250,000 people.", "a quarter of a million people", AGREE),
    ("Is the hall free for members?", "Yes.", "It doesn't cost members anything.", AGREE),
    ("Is the hall free for members?", "Yes.", "It doesn't cost members anything, but guests pay.", AGREE),
    # a name asked for; a time of day asked for (a date is none); an amount asked for; a vague place; a time's loop
    ("What is the treasurer's name?", "I can't say.", "The treasurer looks after the club's money.", NO_ANSWER),
    ("What is the treasurer's name?", "I can't say.", "Her name is Lena Vogt.", DIFFER),
    ("What hours is the hall open?", "I can't say.", "Thursday 15 May.", NO_ANSWER),
    ("What time does the match start?", "I can't say.", "On the 6th.", NO_ANSWER),
    ("How much was the entry fee?", "I can't say.", "The entry fee was paid when you booked.", NO_ANSWER),
    ("What is the deposit for the hall?", "I can't say.", "The deposit covers any damage.", NO_ANSWER),
    ("How much does a second board cost?", "I can't say.", "A second board can be hired.", NO_ANSWER),
    ("Where must the tables go?", "I can't say.", "They must go to a new place.", NO_ANSWER),
    ("What time is the bus?", "The number 9 bus.", "8:12 8:12 8:12 8:12 8:12 8:12", DIFFER),
    ("What time is the bus?", "At 8:12.", "8:12 8:12 8:12 8:12 8:12 8:12", AGREE),
    # a place named by its kind of noun; a year or 'second-hand' is no amount
    ("Where should members park?", "Riverside car park.", "They park in the Riverside car park.", AGREE),
    ("Where should members leave their cars?", "I can't say.", "The long-stay car park.", DIFFER),
    ("How much did Omar pay for the board?", "I can't say.", "He bought it second-hand in 1998.", NO_ANSWER),
    ("How much did Omar pay for the board?", "I can't say.", "He paid £20 for it in 1998.", DIFFER),
    # two ranges of time agree end for end, an hour without minutes is on the hour
    ("When is the hall open?", "9am to 5pm.", "09:00 to 17:30.", DIFFER),
    ("When is the hall open?", "9am to 5pm.", "From 09:00 until 17:00.", AGREE),
    # to 'who', a name where something is names nobody, a name it came from does; a role restated after a phrase;
    # an ordinal is no amount
    ("Who found the trophy?", "I can't say.", "It was found in Chester.", NO_ANSWER),
    ("Who found the trophy?", "I can't say.", "It was handed in by Omar Haddad.", DIFFER),
    ("Who sent the letter?", "Lena Vogt.", "The letter came from Lena Vogt.", AGREE),
    ("Who keeps score on Friday?", "I can't say.", "The scorer on Friday is the scorer for the club.", NO_ANSWER),
    ("How much has the sponsor paid?", "I can't say.", "The sponsor has paid the first instalment.", NO_ANSWER),
    ("What is the vegan starter?", "Smoked aubergine with miso and sesame.",
     "For vegans it's smoked aubergine with miso and sesame instead of the burrata.", AGREE),
    # beside a non-answer, the other must give something of its own: general talk, an order or an exclamation
    # does not; a number, a name, a place, a time, an agent or a short reply does
    ("What should visitors bring?", "I can't say.", "Visitors always enjoy the gardens here, whatever the weather.",
     NO_ANSWER),
    ("What should visitors bring?", "I can't say.", "Please ask at the front desk when you arrive.", NO_ANSWER),
    ("Who painted the mural?", "No idea.", "Oh, what a beautiful mural!", NO_ANSWER),
    ("What does the course cost?", "I can't say.", "You can sign up for one at any time of the year.", NO_ANSWER),
    ("What does the course cost?", "I can't say.", "It costs £120 for the whole term.", DIFFER),
    ("Where is the meeting held?", "I can't say.", "Upstairs in the library, on the second floor.", DIFFER),
    ("When does the market open?", "I can't say.", "It opens every Saturday from May onwards.", DIFFER),
    ("Who repaired the roof?", "I can't say.", "A local carpenter did the whole job last spring.", DIFFER),
    ("What should visitors bring?", "I can't say.", "Sturdy boots and a flask.", DIFFER),
    ("Which room is new this year?", "The new room is shown with photos on the map.",
     "There's only one new room and it comes with a guide to help you.", NO_ANSWER),
    # a month is no name to compare to 'what'; a hyphenated name said with a space is the same name
    ("What kind of bus can the club hire?", "Low-floor minibuses.",
     "The club can hire low floor minibus services, with bookings open by May.", AGREE),
    # times that say no time; exclamations; to a question of a plain kind, two answers that give none of it
    ("When did the club last win the cup?", "I can't say.", "A good while ago now.", NO_ANSWER),
    ("How long did the repairs take?", "For a while.", "The repairs were done by the council.", NO_ANSWER),
    ("When did the club last win the cup?", "I can't say.", "In the spring of 2019.", DIFFER),
    ("Can members bring guests?", "Guests make every evening more fun!", "I can't say.", NO_ANSWER),
    ("Can members bring guests?", "Yes, up to two each!", "I can't say.", DIFFER),
    ("have a nice day!", "haha thanks, you too!", "oh cool, what kind of music?", DIFFER),  # small talk asks nothing
    ("Why was the match called off?", "Matches are called off now and then, sadly.",
     "The club always does its best on the day.", NO_ANSWER),
    ("Why shouldn't you fill the kettle right to the top?", "Just pour gently and you'll be fine.",
     "Keep it halfway, lid on.", NO_ANSWER),
    ("Which way up should the tiles go?", "Glazed side up.", "Glazed side down.", DIFFER),
    ("Where did the cat sleep?", "On the sofa.", "In the spare bedroom.", DIFFER),
    ("Where did the cat sleep?", "On the sofa.", "On the couch.", AGREE),
    ("Which trains are usually full?", "The 07:15 and the 17:40.", "The 07:15.", DIFFER),
    ("Which trains are usually full?", "The 07:15 and the 17:40.", "The 17:40 and the 07:15.", AGREE),
    # a short reply to a question of a plain kind shows that kind, or it does not answer
    ("Where was the painting first shown?", "I can't say.", "It was shown to the public.", NO_ANSWER),
    ("Who leads the choir?", "I can't say.", "You should ask about that at the door.", NO_ANSWER),
    ("Who leads the choir?", "I can't say.", "Seo-yeon.", DIFFER),
    ("Who believed him?", "I can't say.", "Nobody.", DIFFER),
    ("When do the clocks change?", "I can't say.", "The 30th.", DIFFER),
    ("Where should spills go?", "I can't say.", "Down the drain.", DIFFER),
    ("How long is the new rope?", "I can't say.", "A new rope has been ordered for £145.", NO_ANSWER),  # no length
    ("How long is the new rope?", "I can't say.", "Sixty metres, the club says.", DIFFER),
    # to 'where', one place said at two scales agrees (WordNet's part holonyms), two places apart do not
    ("Where was the bell cast?", "In Glasgow.", "It was cast in Scotland.", AGREE),
    ("Where was the bell cast?", "In Glasgow.", "In Hamburg.", DIFFER),
    ("Where was the bell cast?", "In Hamburg.", "It was cast in Scotland.", DIFFER),
    # 'a very good one' points at none; 'the green one' at one
    ("Which kettle did they buy?", "I can't say.", "A really good one.", NO_ANSWER),
    ("Which kettle did they buy?", "I can't say.", "The green one.", DIFFER),
    # a number that labels a thing measures nothing; an ordinal counts nothing
    ("How long is the bridge?", "I can't say.", "It crosses the river at Junction 9.", NO_ANSWER),
    ("How long is the bridge?", "I can't say.", "It is 9 kilometres.", DIFFER),
    ("How tall is the statue?", "Look first at its base!", "It stands in Hall 3.", NO_ANSWER),
    # 'the person who …' says that someone is, not who
    ("Who signed the lease?", "I can't say.", "The person who rents the flat.", NO_ANSWER),
    ("Who signed the lease?", "I can't say.", "The tenant.", DIFFER),
    # beside a non-answer, talk the story does not tell shows no answer; a name or number of its own answers
    ("What should visitors bring?", "I can't say.", "Snacks for the long games.", NO_ANSWER),
    ("Where can members park?", "I can't say.", "Parking near a library is often hard.", NO_ANSWER),
    ("Who signed the lease?", "I can't say.", "Maria Lopez.", DIFFER),
    # a yes or no beside the same words without it: nothing tells them apart
    ("Will the stitches need to be taken out?", "No, they're dissolvable.", "They dissolve on their own.", AGREE),
    ("Will the stitches need to be taken out?", "No, they're dissolvable.", "A nurse takes them out.", DIFFER),
    # to 'which month', only a month answers
    ("In which month was the hall opened?", "I can't say.", "In the year the war ended.", NO_ANSWER),
    ("In which month was the hall opened?", "I can't say.", "In May, after the war.", DIFFER),
    # a difference the judge does not show (no other number, name, yes or no; the meaning only half alike) is none
    ("Why was the last match stopped?", "Because the hall flooded that evening.",
     "Water came into the building during play, so they ended it.", AGREE),
    ("Why was the last match stopped?", "The hall flooded.", "The players went home early.", DIFFER),
    # … but two short answers that share no word beyond the question's differ plainly
    ("What flavour was the cake?", "Dark chocolate.", "Lemon and lavender.", DIFFER),
    # numbers joined by 'and' are no list of items the other leaves out
    ("Where do members park?", "Behind the hall.", "A car park behind the hall, between 9 and 11.", AGREE),
    # to a yes/no question, neither saying yes or no is no answer; a verb of the question's relative clause, or a
    # sentence with a copula and a noun of its own, is no echo that says yes
    ("Was the player who won the trophy hurt?", "He won all five of his games.", "The hall flooded that night.",
     NO_ANSWER),
    ("Did the club meet in the library?", "It did.", "Lunch is from 12 to 1.", DIFFER),
    # a clock time counts nothing; a year says how long only as where a span starts or ends
    ("How many games did Omar win?", "At 11:00.", "At 12:30.", NO_ANSWER),
    ("How long did the match last?", "It was played in 2022.", "I can't say.", NO_ANSWER),
    ("How long has the club met there?", "Since 2019.", "I can't say.", DIFFER),
    # a race time in minutes, seconds and hundredths; inches
    ("What was Omar's fastest time?", "1:18.45", "78.45 seconds.", AGREE),
    ("What was Omar's fastest time?", "1:18.45", "1:19.45", DIFFER),
    ("How fast does the hedge grow?", "Up to an inch a week.", "About two and a half centimetres a week.", AGREE),
    # to 'Is it X?', another term of X's class says no
    ("Is the trophy gold?", "No.", "It is silver.", AGREE),
    ("Is the trophy gold?", "Yes.", "It is silver.", DIFFER),
    # to who holds a role, a sentence about the role that names nobody does not answer
    ("Who is the club's treasurer?", "I can't say.", "The treasurer keeps the accounts and rings Omar on Fridays.",
     NO_ANSWER),
    ("Who is the club's treasurer?", "The treasurer looks after the money.", "The treasurer is Lena Vogt.", DIFFER),
    ("Who is the Club Treasurer?", "I can't say.", "The Club Treasurer keeps the accounts and rings Omar.", NO_ANSWER),
    ("Who is the Club Treasurer?", "I can't say.", "The Club Treasurer is Lena Vogt.", DIFFER),
    ("Who is the club's treasurer?", "The treasurer looks after the money.", "Lena Vogt, the treasurer.", DIFFER),
    # to a question that names the kind of amount, an amount of another kind does not answer
    ("What temperature was the hall?", "Humidity of 45 to 55 per cent.", "It was open for 3 hours.", NO_ANSWER),
    ("What temperature was the hall?", "Humidity of 45 to 55 per cent.", "Between 18 and 21 degrees.", DIFFER),
    # the question's opening, cut off, copies it
    ("If the hall floods, where should members park?", "If the hall floods, where should members", "I can't say.",
     NO_ANSWER),
    # a reason that only says the question again
    ("Why was the last match stopped?", "It was stopped because they needed to stop the match.",
     "The last match was on Thursday.", NO_ANSWER),
    ("Why was the last match stopped?", "It was stopped because they needed to stop the match.", "The hall flooded.",
     DIFFER),
    # talk of things in general that the story does not tell, beside a non-answer
    ("What does the carpenter repair?", "Carpenters often work with oak and pine.",
     "Carpenters usually charge by the hour.", NO_ANSWER),
    ("What does the carpenter repair?", "Carpenters often work with oak and pine.", "He repairs the roof.", DIFFER),
    # a definition is no answer about the story
    ("What did the carpenter repair?", "A carpenter is a person who works with wood.", "I can't say.", NO_ANSWER),
    ("What did the carpenter repair?", "A carpenter is a person who works with wood.", "The roof.", DIFFER),
    # names read whole and in any order; a dozen counted; ordinals in words
    ("Which villages does the bus serve?", "Stowmere and Little Horton.", "Little Horton and Stowmere.", AGREE),
    ("What are the two ponies called?", "Bramble and Nutmeg.", "Nutmeg and Bramble.", AGREE),
    ("How many rolls did Omar order?", "36.", "Three dozen.", AGREE),
    ("How many rolls did Omar order?", "48.", "Three dozen.", DIFFER),
    ("Which anniversary is the club marking?", "Its 60th.", "The club's sixtieth anniversary.", AGREE),
    # a label the question names answers it
    ("Which year group runs the stall?", "Year 9.", "The stall is run by Year 9.", AGREE),
    ("Which year group runs the stall?", "Year 9.", "The stall is run by Year 10.", DIFFER),
    # a statement with a rising tag asks nothing back; an exclamation that gives the term asked answers
    ("What was the name of the boat?", "The Kestrel.", "I think it was called the Kestrel, right?", AGREE),
    ("What colour is the new kit?", "Green.", "It's green!", AGREE),
    # two ranges agree end for end
    ("When is the hall closed?", "From 3 to 10 May.", "From 10 to 17 May.", DIFFER),
    ("When is the hall closed?", "From 3 to 10 May.", "3-10 May.", AGREE),
    # a dose beside an item is no item of its own: two of three items are part of the list
    ("What is in the kit?", "Plasters, a bandage and tweezers.", "Plasters 10 cm and a bandage 5 m.", DIFFER),
    # to 'when', the event a thing waits for says when
    ("When was the last match stopped?", "When the hall flooded.", "I can't say.", DIFFER),
    # the question said again, in its words or reported, answers nothing; an answer after it is read
    ("What should members bring?", "The question is what members should bring to the hall.", "I can't say.",
     NO_ANSWER),
    ("What should members bring?", "What should members bring? Their own cups.", "Their own cups.", AGREE),
    ("What does the big key open?", "The big key opens what the big key opens at the hall.", "I can't say.",
     NO_ANSWER),
    ("How much is in the fund?", "£3.2m.", "3.2 million pounds, in what is called the Hall Fund.", AGREE),
    # a sentence about the story itself tells nothing of what is asked, however often it is said
    ("When did the hall open?", "The story is set in 2024.", "The story is set in 2024.", NO_ANSWER),
    ("When did the hall open?", "The story is set in 2024.", "In 2019.", DIFFER),
    # to 'who', a day, a number or a place named by what is in it names nobody; 'which person' asks who
    ("Who locks the hall?", "On Tuesdays and Fridays.", "Tomorrow at 8:00.", NO_ANSWER),
    ("Who locks the hall?", "Thirty years.", "It's behind the chess club noticeboard.", NO_ANSWER),
    ("Who locks the hall?", "On Tuesdays and Fridays.", "Omar Haddad.", DIFFER),
    ("Which person keeps the keys?", "07700 900 731.", "I can't say.", NO_ANSWER),
    ("Which person keeps the keys?", "07700 900 731.", "Lena Vogt.", DIFFER),
    # one answer offered beside another is a difference, not a doubt
    ("On what day did the club meet?", "On Thursday.", "On Thursday or maybe the following Monday.", DIFFER),
    # 'which days' asks for days; an amount of another kind (a light level, a date) says no temperature or mileage
    ("On which days does the club meet?", "The fee is 2 euros a year.", "The number is 0345 210 7788.", NO_ANSWER),
    ("On which days does the club meet?", "The fee is 2 euros a year.", "On Thursdays.", DIFFER),
    ("What temperature was the library?", "Light of no more than 50 lux.", "I can't say.", NO_ANSWER),
    ("What mileage did the van show?", "28 April 2023.", "I can't say.", NO_ANSWER),
    ("What mileage did the van show?", "61,870 miles.", "I can't say.", DIFFER),
    # a document said to record the thing asked gives nothing of it
    ("What was the weather at the launch?", "The diary records the weather.", "The diary records the weather.",
     NO_ANSWER),
    ("What was the weather at the launch?", "The diary records the weather.", "Drizzle.", DIFFER),
    # a bare '9.45' beside a clock time is that time
    ("What time does the bus leave?", "9.45", "At a quarter to ten.", AGREE),
    ("What time does the bus leave?", "9.45", "At half past nine.", DIFFER),
    # one end of a range, one item of a list of two, is another answer; more detail of another kind is not
    ("What will the repair cost?", "£150 to £220.", "£150.", DIFFER),
    ("When is the fair?", "Saturday 3 and Sunday 4 May.", "Saturday 3 May.", DIFFER),
    ("When is the fair?", "3 May.", "Saturday 3 May, from 10 am to 4 pm.", AGREE),
    # a word that labels by its number names with the number
    ("Which cottage has the parrot?", "The Hales at number 12.", "Number 7.", DIFFER),
    ("Which cottage has the parrot?", "The Hales at number 12.", "Number 12.", AGREE),
    # a price, a length or a span counts no things; a weight may ('500 g' of plums)
    ("How many rooms does the inn have?", "3.5 km", "3.5 km", NO_ANSWER),
    ("How many rooms does the inn have?", "They charge £80 for it.", "Nine.", DIFFER),
    ("How many plums go in the jam?", "500 g.", "Half a kilo.", AGREE),
    # a loop of an amount in words says the other's amount in figures
    ("What did the boards cost?", "forty pound forty pound forty pound forty pound forty pound",
     "£40 including the box.", AGREE),
    # 'between A and B' is a place, not a list of two; to 'what happens', a clause with its own verb answers
    ("Who fell on the ferry?", "Mr T. Oduya, a man of about sixty, on the stair between decks 1 and 2.", "Mr Oduya.",
     AGREE),
    # a name WordNet knows only as a name ('Ferdinand', a king) names someone at the start of a sentence
    ("Who repaired the roof?", "Ferdinand the carpenter was the one who repaired it.",
     "The local carpenter, Omar Haddad, repaired it.", DIFFER),
    # 'the X was found on the X' says a thing is itself; a date is no count; a date alone names no route
    ("Which door had the broken lock?", "The back-door lock was found on the back-door lock.", "The back door.",
     NO_ANSWER),
    ("How many boards were bought?", "They were bought on Tuesday 4 June, 12 of them.", "They were bought on 4 June.",
     DIFFER),
    ("Which room did the club use?", "the 4th of June 2024", "the 4th of June 2024", NO_ANSWER),
    ("Which room did the club use?", "the 4th of June 2024", "The library.", DIFFER),
    # a sentence about the story that goes on to answer is read for its answer
    ("How many games did Omar win?", "The story is about a chess club, 5 games were won.",
     "The story is about a chess club, 5 games were won.", AGREE),
    # to 'what date', a time of day alone gives no date
    ("What date is the next match?", "7:30 pm in the library.", "Soon, so bring your boards.", NO_ANSWER),
    ("What date is the next match?", "7:30 pm in the library.", "Thursday 4 June.", DIFFER),
    ("What happened to the spills when the hall flooded?", "the the the the the the the the the the the",
     "The spills went down the drain behind the hall.", DIFFER),
])
def test_outcomes_read_from_what_each_answer_says(oracle, question, a, b, expected):
    assert outcome(oracle, question, a, b) == expected


def test_who_someone_is_is_not_said_by_the_clause_that_describes_them(oracle):
    # without a story, so that only what the answer gives decides: the school does not say who runs it
    def outcome(b):
        return oracle.compare("Who is the headteacher?", "I can't say.", b).outcome(oracle.threshold)

    assert outcome("The headteacher is the person who runs the school.") == NO_ANSWER
    assert outcome("Someone who works for the council.") == NO_ANSWER
    assert outcome("The deputy who ran the school last year.") == DIFFER
    # nor by a name in it: 'Biscuit' is the cat the owner brought in
    owner = "What is the name of the cat's owner?"
    assert oracle.compare(owner, "I can't say.", "The person who brought Biscuit in.").outcome(oracle.threshold) \
        == NO_ANSWER
    assert oracle.compare(owner, "I can't say.", "Ana Lopez, who brought Biscuit in.").outcome(oracle.threshold) \
        == DIFFER


def test_a_description_the_story_gives_the_named_person_agrees_with_the_name(oracle):
    story = ("Noor is booked for Friday at ten. Tamsin Oyelade, our senior stylist, will cut her hair. Ben Cole, a "
             "junior stylist, will wash it.")

    def outcome(a, b):
        return oracle.compare("Who is Noor's stylist?", a, b, story).outcome(oracle.threshold)

    assert outcome("Tamsin Oyelade.", "The senior stylist.") == AGREE
    assert outcome("Ben Cole.", "The senior stylist.") == DIFFER


def test_a_title_in_capitals_the_story_gives_the_named_person_agrees_with_the_name(oracle):
    def outcome(question, a, b):
        return oracle.compare(question, a, b, STORY).outcome(oracle.threshold)

    assert outcome("Who said they had raised 240 euros?", "Lena Vogt.", "The Club Treasurer.") == AGREE
    assert outcome("Who said they had raised 240 euros?", "Omar Haddad.", "The Club Treasurer.") == DIFFER


def test_a_thing_said_to_be_itself_answers_nothing_however_long_its_name(oracle):
    agreed = oracle.compare("Which bell did Omar ring?", "The bell for the 14th course was the bell for the 14th "
                            "course.", "The tenor bell.")
    assert agreed.outcome(oracle.threshold) == DIFFER and agreed.reason.endswith("says a thing is itself")


def test_two_places_the_story_writes_side_by_side_are_one_place(oracle):
    story = ("The repair café meets at the Old Forge, 14 Mill Lane, on the first Saturday of the month. Bikes are "
             "mended at the back. The next session moves from the Old Forge to Tanner's Yard.")

    def outcome(a, b):
        return oracle.compare("Where does the repair café meet?", a, b, story).outcome(oracle.threshold)

    assert outcome("At the Old Forge.", "14 Mill Lane.") == AGREE
    assert outcome("At the Old Forge.", "Tanner's Yard.") == DIFFER  # 'from … to …' names two places
    assert outcome("At the Old Forge.", "22 Mill Lane.") == DIFFER


def test_a_loop_is_read_once_and_a_repeated_word_gives_nothing(oracle):
    loop = "Omar won the trophy. He won the trophy. He won the trophy. He won the trophy. He won the"
    assert without_loop(loop) == ("Omar won the trophy.", None)
    assert without_loop("No, no, no, no, no, no, no")[1] is not None
    assert without_loop("Five games. Five games. Five games. Five games.") == ("Five games.", None)  # a sentence
    assert without_loop("Trophy. Trophy. Trophy. Trophy.")[1] is not None  # one word is no sentence
    assert outcome(oracle, "Who won the trophy?", loop, "Omar Haddad") == AGREE
    assert outcome(oracle, "Who won the trophy?", loop, "Lena Vogt") == DIFFER
    assert outcome(oracle, "Did they raise money?", "No, no, no, no, no, no, no", "I can't tell.") == NO_ANSWER
    # a word said over and over that is the other's whole answer says it too
    assert outcome(oracle, "Who won the trophy?", "Omar Omar Omar Omar Omar Omar", "Omar.") == AGREE
    assert outcome(oracle, "How much did they raise?", "euros euros euros 240 euros euros", "240") == AGREE
    assert outcome(oracle, "Who won the trophy?", "Omar Omar Omar Omar Omar Omar", "Lena.") == DIFFER
    # …and so does a loop of part of it that the question does not say; a loop of the question's word does not
    assert outcome(oracle, "Who won the trophy?", "Omar Omar Omar Omar Omar Omar", "Omar Haddad") == AGREE
    assert outcome(oracle, "Who is the treasurer?", "Treasurer treasurer treasurer treasurer treasurer",
                   "The treasurer is the club's treasurer.") == NO_ANSWER
    assert outcome(oracle, "What did they raise?", "money money money money money money", "240 euros of money") \
        == DIFFER


def test_cosine_stays_a_pure_score():
    cosine = Oracle("cosine")
    agreed = cosine.compare("Who is the treasurer?", "I don't know.", "I don't know.")
    assert not agreed.no_answer and agreed.score == pytest.approx(1.0)


# ---- the relations

SEED = Seed("c", STORY, (Round(1, "Who won the trophy?", "Omar Haddad"),
                         Round(2, "Who is the treasurer?", "Lena Vogt")))
ORIG_CASE = TestCase("c", ORIG, 1, (1, 2))


def ec(equivalent):
    return ECVerdict(equivalent, equivalent, equivalent, False, frozenset(), frozenset(), None)


def answers(case, *texts):
    return {(case.test_case_id, i): Answer(t) for i, t in enumerate(texts, start=1)}


def test_mr4_group_of_two_non_answers_is_no_answer_not_a_violation(oracle):
    kept, lost = TestCase("c", "DRS", 1, (1, 2)), TestCase("c", "DRR", 1, (1, 2))
    verdicts = {ORIG_CASE.test_case_id: [ec(True)] * 2, kept.test_case_id: [ec(True), ec(True)],
                lost.test_case_id: [ec(True), ec(False)]}
    outputs = {**answers(ORIG_CASE, "Omar Haddad", "Lena Vogt"), **answers(kept, "Omar", "I don't know."),
               **answers(lost, "Omar", "The story does not say who the treasurer is.")}
    cases = [ORIG_CASE, kept, lost]
    checks = {c.check_id: c for c in judge([SEED], cases, verdicts, outputs, oracle, oracle.threshold)}
    mr4 = checks["MR4/c/2"]
    assert mr4.no_answer and not mr4.violated
    # the same group where the EC-false version gives the EC-true version's (wrong) answer is a violation
    named = {**outputs, **answers(kept, "Omar", "Omar Haddad"), **answers(lost, "Omar", "It is Omar Haddad.")}
    assert {c.check_id: c for c in judge([SEED], cases, verdicts, named, oracle, oracle.threshold)}["MR4/c/2"].violated
    counted = report(list(checks.values()), cases, verdicts)["no_answer"]
    assert {"relation": "MR4", "no_answer_pairs": 1, "checks": 1, "seed_questions": 1} in counted


def test_the_stored_pair_is_the_pair_that_decided(oracle):
    cases = [TestCase("c", p, 1, (2, 1)) for p in ("DRS", "DRD", "DSD")] + [TestCase("c", "DRR", 1, (1,))]
    a, b, c, lost = cases
    verdicts = {ORIG_CASE.test_case_id: [ec(True)] * 2, a.test_case_id: [ec(True), ec(True)],
                b.test_case_id: [ec(True), ec(True)], c.test_case_id: [ec(True), ec(True)],
                lost.test_case_id: [ec(False)]}
    outputs = {**answers(ORIG_CASE, "Omar Haddad", "Lena Vogt"), **answers(a, "Lena Vogt", "Omar Haddad"),
               **answers(b, "Lena", "Omar won it."), **answers(c, "Vogt", "Lena Vogt won it."),
               **answers(lost, "Lena Vogt took the trophy home.")}
    checks = {x.check_id: x for x in judge([SEED], [ORIG_CASE, *cases], verdicts, outputs, oracle, oracle.threshold)}
    mr3 = checks["MR3/c/1"]  # the EC-true versions of round 1: Omar, Omar, Lena — the least similar pair decides
    assert mr3.violated and {mr3.text_a, mr3.text_b} in ({"Omar Haddad", "Lena Vogt won it."},
                                                         {"Omar won it.", "Lena Vogt won it."})
    decided = dict(zip(mr3.test_case_ids[:2], mr3.positions[:2]))
    assert c.test_case_id in decided and decided[c.test_case_id] == 2
    assert sorted(mr3.test_case_ids) == sorted(x.test_case_id for x in (a, b, c))  # every version is kept
    mr4 = checks["MR4/c/1"]  # EC-false "Lena Vogt took the trophy home." is most like c's "Lena Vogt won it."
    assert mr4.violated and (mr4.text_a, mr4.text_b) == ("Lena Vogt won it.", "Lena Vogt took the trophy home.")
    assert mr4.test_case_ids[:2] == (c.test_case_id, lost.test_case_id) and mr4.positions[:2] == (2, 1)


def test_dt_inv_agrees_when_both_name_the_same_team_in_other_sentences(oracle):
    methods()  # the built-in methods register their relations
    seed = Seed("t", "The Rovers beat the Hillcrest Hawks 2-0 in the county cup final.",
                (Round(1, "Which team won the final?", "the Rovers"),))
    orig, changed = TestCase("t", ORIG, 1, (1,)), TestCase("t", "SR", 1, (1,), target_round=1)
    judging = Judging(seed, [changed], {}, {**answers(orig, "The Rovers won the county cup."),
                                            **answers(changed, "It was the Rovers, 2-0 against Hillcrest.")},
                      oracle.for_story(seed.story), oracle.threshold, orig_cases=[orig])
    (check,) = RELATIONS[DT_INV].judge(judging)
    assert not check.violated and not check.no_answer
    other = Judging(seed, [changed], {}, {**answers(orig, "The Rovers won the county cup."),
                                          **answers(changed, "The Hillcrest Hawks won it.")},
                    oracle.for_story(seed.story), oracle.threshold, orig_cases=[orig])
    assert RELATIONS[DT_INV].judge(other)[0].violated
