"""Observations: what a speaker said about their own life, one short third-person line per
event, as a person taking notes would write it.

    Melanie: "I went to a LGBTQ support group yesterday and it was so powerful."  (2023-05-08)
    - Melanie went to a LGBTQ support group on 2023-05-07 and it was so powerful. (2023-05-08, e-…)

An event gives at most one observation: its most informative plain statement with the speaker
as its subject or owner ("I ...", "we ...", "my ..."), put in the third person (the speaker
named once, for the first "I", "me" or "my"; "they", "them" and "their" after), its relative
times made absolute from the event's time (`when.absolute`: the line reads right weeks later),
with the date it was said and the event's id in a tail like a fact's. Offline and traceable:
every word comes from the turn but the names, the pronouns, the dates and the verb endings.
Clauses joined by a dash are weighed alone ("A lot's happened - I got an internship"); a subject
the speaker left out is put back ("Been busy painting" → "... has been busy painting").

A line must be true of its owner and say something read alone. What is no observation: a
question, a reaction to the one spoken to ("That's awesome!", "I'm so happy for you", anything
about "you", how something shown "looks"), a pleasantry or a resolve said back ("Congrats on the
show, I'll be tuning in", "I'm going for my dreams", "Friendship means a lot to me", a mood of
nothing in particular), a hedge, a belief or a hypothetical ("if", "would", "maybe", "I think",
"I'm sure", "no doubt"), an exhortation ("Let's ..."), a maxim said of anyone ("Together we can
make a difference", "Pets brighten our days"), a statement standing on nothing named ("We even
played Chess afterward", "Having a furry pal brightens my days": unanchored.py), a sentence that
leans on what came before it (a pronoun with nothing in the sentence it could stand for: "I've
had them for 3 years", "I also use it to speak up", "those topics", "a doll like this"; the
clause before such a one may stand alone), a fragment (no verb, an order or a thank-you without
its subject, a "when ..." clause whose main clause was cut), and whatever the assistant says
(life_facts.NOBODY_ROLES). An image's caption (a model's guess) is left out; a turn that only
shares a photo says what it shows (photos.py: "Melanie's family was camping at the beach").

A reply is read with the turn before it (answering.py): "the show" the other speaker called
"my show" is theirs; "this color" when they asked about the color is no observation alone.

The line never ends in a block id `^e-…` (an id scan would count the event twice, journal.py).
A line whose event id is in the note's `## Observations` already is not written again: a re-run
adds nothing and a person's edit of a line (the id kept) stands, as with facts.
"""

from __future__ import annotations

import re

from brainiac.formats import events as ev
from brainiac.formats.observation_lines import SECTION as SECTION  # the section observe writes
from brainiac.formats.observation_lines import Observation as Observation
from brainiac.formats.observation_lines import add as add
from brainiac.formats.observation_lines import by_source as by_source
from brainiac.formats.observation_lines import render as render
from brainiac.formats.observation_lines import sources as sources
from brainiac.formats.observation_lines import without as without
from brainiac.language import (
    answering,
    clauses,
    doing,
    expletive,
    hedges,
    hollow,
    leaning,
    likeness,
    photos,
    pointing,
    repair,
    unanchored,
    we_group,
    when,
)
from brainiac.language.lexicon import STOP_WORDS, word_set
from brainiac.language.life_facts import NOBODY_ROLES, USER_ROLES
from brainiac.language.third_person import AS_IS, placed
from brainiac.language.third_person import third_person as third_person

_IMAGE_RE = re.compile(r"\s*\[image: [^\]]*\]\s*$")
# Words that open a sentence and say nothing: discourse markers, interjections, a vocative.
_OPENER_RE = re.compile(
    r"^(?:(?:btw|by the way|so|well|still|also|anyway|anyways|oh|ah|aw+|wow|whoa|woah|yeah|yes|yep|"
    r"hey|hi|hello|haha+|lol|omg|plus|and|but|honestly|actually|really|ok|okay|um|hmm|gosh|man|"
    r"thanks|thank you|sure|true|right|totally|exactly|absolutely|definitely|indeed|yup|ya)"
    r"(?:\s+[A-Z][a-z]+)?\s*[,!.:;—-]+\s*)+",
    re.IGNORECASE,
)
# A conjunction that joins the sentence to the one before: "But having a pup brightens my days"
# reads alone without it.
_CONJUNCTION_RE = re.compile(r"^(?:but|and|plus|or)\s+(?=[a-z])", re.IGNORECASE)
# The start of a reaction to what the other said, not something about oneself.
_REACTION_RE = re.compile(
    r"^(?:thanks|thank you|congrat\w*|way to go|wow|sorry|looking forward|"
    r"that(?:'s| is| was| sounds)|this (?:is|was|sounds)|"
    r"it(?:'s| is)? (?:so |really )?(?:great|awesome|amazing|cool|nice|good|sweet|lovely|"
    r"wonderful|fun|beautiful|sounds)|sounds|glad|so glad|same|me too|good luck|"
    r"i(?:'m| am) (?:so |really |super |very )?(?:glad|happy|sorry|proud|excited for|thrilled for|"
    r"sure|here for|with you|rooting)|"
    r"i (?:bet|know|agree|understand|hope|wish|appreciate|can't wait|cannot wait|totally|"
    r"feel you|see|guess|mean|think|believe|suppose|wonder|love (?:that|it|this|those|these|how|"
    r"the way|the thought|the idea|hearing|seeing)|can (?:imagine|picture|see|tell)|"
    r"couldn't agree)|"
    r"can't wait|cannot wait|hope|wish|miss|let's|let us|keep (?:it )?up|take care|"
    r"talk (?:to you )?soon|see you|catch you|bye|"
    r"no worries|no problem|you're welcome|any time|anytime|long time no|"
    r"we (?:haven't|have not) (?:talked|chatted|spoken|caught up)|check (?:out|this|it)|"
    r"look at|take a look|moments like (?:these|this)|life(?:'s| is)|my (?:advice|tips?)|"
    r"a lot(?:'s| has) (?:been|happened)|"
    r"it(?:'s| is) (?:amazing|incredible|crazy|funny|wild) how)\b",
    re.IGNORECASE,
)
# After a reaction, a deed of the speaker's own: "Sorry to hear that, I lost my job too", "I
# totally get it, I had a mentor too".
_AFTER_REACTION_RE = re.compile(
    r"[,;:]\s*(?:(?:but|and|so)\s+)?(?=(?:I|[Mm]y \w+|[Ww]e)\s+(?:just\s+|also\s+)?"
    r"(?!(?:figured|guessed|wondered|hoped|wished|needed)\b)(?:\w+ed|had|was|were|went|got|made|"
    r"lost|took|saw|met|won|ran|found|bought)\b)"
)
_LISTENER_RE = re.compile(r"\b(?:you|your|yours|yourself|you're|you've|you'll|you'd|ya|u)\b", re.I)
_FIRST_RE = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|my|me|mine|myself|we|we're|we've|our|us)\b", re.I)
# How the speaker feels, as the whole of what they say ("I'm feeling so motivated and
# supported, ...", "I felt so proud and grateful"): a mood, without what it is about.
_MOOD = (
    r"(?:excited|grateful|thankful|happy|glad|proud|blessed|lucky|thrilled|stoked|relieved|"
    r"motivated|supported|accepted|inspired|nervous|anxious|scared|stressed|sad|upset|calm|"
    r"peaceful|fulfilled|humbled|honored|overwhelmed|tired|pumped|content|good|great|amazing|"
    r"awesome|determined|hopeful|confident|positive|ready)"
)
# After a mood, what says it is of nothing in particular: the end, "for what the future holds",
# "to see where pottery takes me".
_OF_NOTHING_RE = re.compile(
    r"\W*$|\s*[,;:.!-]|\s+(?:for|about|to see)\s+(?:what|whatever|where|how far|the future|"
    r"everything|it all|all)\b",
    re.IGNORECASE,
)
_FEELING_RE = re.compile(
    r"^I(?:'m| am| was| feel| felt|'m feeling| was feeling| have been| 've been|'ve been)\s+"
    r"(?:(?:so|really|very|super|pretty|just|totally|incredibly|truly|quite|also|now|all)\s+)*"
    rf"{_MOOD}(?:,?\s+(?:and\s+)?(?:(?:so|really|very|super|pretty|totally|kinda|a bit)\s+)*"
    rf"{_MOOD})*\b",
    re.IGNORECASE,
)
# A belief or a guess about what will be, not something that is: "I'm sure it'll pay off", "I
# have no doubt they'll love it", "I feel like this is my calling".
_BELIEF_RE = re.compile(
    r"\b(?:I'm sure|I am sure|no doubt|I bet|I'm certain|I feel like|I felt like|I feel that|"
    r"I believe|"
    r"I mean)\b",
    re.IGNORECASE,
)
# The speaker as the subject, perhaps after a short opening phrase ("On a different note, I
# found ...", "Last week we ..."): not "It was gorgeous", "They're a huge part of my journey".
_DONE_PAST = r"(?:made|went|took|had|got|saw|ran|won|met|spent|wrote|built|found|bought|did)"
_SUBJECT_RE = re.compile(
    r"^(?:[^,;:.!]{0,40},\s*|(?:last|this|yesterday|today|recently|finally|just|also|so|and)\b"
    r"[^,;:.!]{0,20}?\s)?"
    r"(?:I\b|I'm\b|I've\b|I'd\b|I'll\b|[Ww]e\b|[Ww]e're\b|[Ww]e've\b|[Mm]y\s|[Oo]ur\s)"
)
# Where a clause about the speaker may start after one about the listener.
_CLAUSE_START_RE = re.compile(
    r"(?:(?:[,;:]|\s[-–—])\s*(?:(?:and|but|so|then|now)\s+)?(?=(?:[Ww]e|[Mm]y|[Oo]ur)\b)|"
    r"(?:(?:[,;:]|\s[-–—])\s*(?:(?:and|but|so|then|now)\s+)?|\bthat\s+)(?=(?:I|I'm|I've)\b))"
)
# A second deed of the speaker's after one done with the listener: "... and watched ...".
_THEN_DID_RE = re.compile(
    r"\s(?:and|then|so)\s+(?=(?:just\s+)?"
    r"(?:\w+ed|went|got|made|took|saw|found|bought|ran|won|met|spent|wrote|began|built)\b)"
)
# A clause that leads into another: alone, it is a fragment.
_SUBORDINATE_RE = re.compile(
    r"(?:when|while|since|after|before|because|although|though|once|until|(?:the )?last time|"
    r"every time|as soon as)\b",
    re.IGNORECASE,
)
# Where a clause joined to the one before it starts.
_COORDINATE_RE = re.compile(
    r",?\s+(?:and|but|so|because|since|while)\s+(?=(?:I|I'm|I've|we|we're|it|it's|they|they're|"
    r"he|she|my|our|the|that|this|there)\b)|,\s+which\s+|\s*;\s+",
    re.IGNORECASE,
)
_HERE_RE = re.compile(
    r"(?<!'m)(?<!\bam)(?<!\bbe)(?<!\bis)(?<!\bare)(?<!'re)\s+(?:over |right )?here\b"
    r"(?!'s|\s+(?:is|are|was|were)\b)",
    re.IGNORECASE,
)
_DANGLING_RE = re.compile(r",?\s+(?:and|but|so|or|then)\s+\S+\s*$", re.IGNORECASE)
_CLAUSE_END_RE = re.compile(
    r",|\s(?:while|when|because|since|as|after|before|and|but|so|with|for|to)\s", re.IGNORECASE
)
_TIME_RE = re.compile(
    r"\b(?:yesterday|today|tonight|tomorrow|last|next|ago|since|weekend|week|month|year|"
    r"\d{4}|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b",
    re.IGNORECASE,
)
# A sentence about how one feels says less than one about what one did.
_FEELINGS = word_set(
    """
    excited grateful thankful happy glad proud love loved blessed lucky thrilled stoked feel
    feeling felt amazing awesome great appreciate
    """
)
# Words of a resolve, a feeling or a blessing: a line saying nothing else is what one says back
# to encouragement ("I'm going for my dreams", "Friendship means a lot to me"), not news.
_ATTITUDE = _FEELINGS | word_set(
    """
    dream dreams best positive forward push pushing going keep keeping stay staying ready blast
    paying pays paid
    friendship means mean lot lots world support supported supportive motivated motivation
    motivating good life living livin livin' journey strong stronger focus focused give giving
    hard work working believe belief faith hope goal goals passion hopeful determined
    inspired inspiring inspiration happiness joy special fun enjoy enjoying enjoyed moments
    memories things stuff everything anything something way always never much many really
    find finding make making take taking get getting go try trying do doing put right attitude
    harder progress impact difference change pursue pursuing chase chasing continue striving
    towards adventure quite ahead looking
    helping people others friends around being having time great company together
    """
)
# A hedge after the statement: ", so maybe we can work together", "just to see how others might
# like it", "even if just for a bit", ", it would be great to have a pup": what comes before it
# stands.
_HEDGE_TAIL_RE = re.compile(
    r"(?:,?\s*(?:so|and|but)?\s*\b(?:maybe|perhaps|hopefully)"
    r"|,?\s+(?:just\s+)?to see (?:how|if|what)"
    r"|,\s*(?:it|that|which)(?:'d|\s+(?:would|could|might))"
    r"|,\s*even if)\b.*$",
    re.IGNORECASE,
)
_OFF_TO_RE = re.compile(
    r"^I(?:'m| am)\s+off\s+to\s+(?:go\s+(?=do\b))?(?!(?:the|a|an|my|our|go)\b)", re.IGNORECASE
)
_CONTENT_MIN = 3
_MIN_WORDS = 5
# A habit, a taste, a role or a deed says enough in three words when its thing is named: "I play
# clarinet", "We made pizza", "I'm an assistant manager", "I love creating art".
_SHORT_RE = re.compile(
    r"^(?:I|We)(?:\s+(?:really|also|just|mostly|still|absolutely))?\s*"
    r"(?:play|love|like|enjoy|made|make|practice|collect|teach|study|'m an?|am an?|'re an?|"
    r"'m drawn to|'ve been busy|'m off to do)\s+(?:some\s+)?"
    r"(?!(?:the|this|that|these|those|it|them|to|something|anything|stuff|things|more)\b)"
    r"[a-z][a-z-]+(?:\s+(?!(?:it|them|this|that|too)\b)[a-z][a-z-]+)?\W*$"
)
_TAG_QUESTION_RE = re.compile(
    r"\s*[,–—-]\s*(?:(?:pretty|so|really) \w+,?\s*)?(?:huh|right|eh|you know|no)\?+$", re.I
)
# "Our" that opens the statement (perhaps after its time) is the speaker's: "Last weekend our
# city held a pride parade".
_OUR_RE = re.compile(
    r"^(?:(?:last|this|next|yesterday|today|recently)\b[^,;:.!]{0,20}?\s|[^,;:.!]{0,40},\s*)?"
    r"our\b",
    re.IGNORECASE,
)
# "We" (or "our X") who did something: "we raised", "our city held"; not "our loved ones".
_WE_DID_RE = re.compile(
    rf"\b(?:we|have|had|our \w+)\s+(?:(?:just|already|\w+ly)\s+)?(?:\w+ed|{_DONE_PAST})\b", re.I
)
_WE = word_set("we we're we've we'd we'll")
_ANYONE = word_set("us ourselves everyone everybody people all each other")
_SINGULAR = word_set("i i'm i've i'd i'll my mine me myself")
_FIRST_PERSON = _SINGULAR | word_set("we we're we've we'd we'll our ours us ourselves")
_MODALS = word_set("can could would should might must will may shall")
# A pointer for an object, in a short sentence, leaves it saying nothing ("I'm going to check it
# out", "I learned that the hard way").
_POINTER_END_RE = re.compile(
    r"\b(?:it|that|this|those|these)(?:\s+(?:out|up|down|through|again|a (?:try|go|shot)))?"
    r"(?:\s+(?:sometime|soon|later|too|now|the hard way|together))?"
    r"(?:\s+(?:(?:last|this|next) \w+|yesterday|today|\w+ (?:days|weeks|months|years) ago))?\W*$",
    re.IGNORECASE,
)
_POINTER_CONTENT_MAX = 4
# A past scene of the speaker's, said with "it": "It was an awesome day at the park with my
# family" stands alone.
_PAST_SCENE_RE = re.compile(
    r"^(?:it|that|this) was (?:a|an|such a)\b(?=.*\b(?:my|our)\s)", re.IGNORECASE
)
# A sentence opening on a pointer to something said before ("It's a symbol of all I overcame",
# "They mean the world to me") says too little alone.
_POINTER_RE = re.compile(
    r"^(?:it|it's|its|they|they're|they've|this(?!\s+(?!(?:is|was|has|one|time)\b)[a-z]+\s+(?:is|was|"
    r"has|reminds|means)\b)|that|that's|these|those|he|he's|she|she's|there|"
    r"one (?:that|of them|of those|of these|is|was)|the other|"
    r"there's|here|here's|which|what)\b",
    re.IGNORECASE,
)
# How something one is shown or told looks or sounds: a reaction to it.
_SEEN_RE = re.compile(
    r"\b(?:it|this|they|those|these|it all)\s+(?:(?:really|just|all)\s+)?"
    r"(?:looks?|sounds?|looked|sounded)\b",
    re.IGNORECASE,
)
# "I", "we", "my", "our": the speaker as who acts or has (not only "it made me ...").
_OWN_RE = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|we|we're|we've|our|my|me)\b", re.IGNORECASE)
# Connectives and transitions that lead into a statement and are no part of it.
_LEAD_RE = re.compile(
    r"^(?:(?:(?:and|but|so|plus|then|now)(?=,|\s+(?:I|we|my|our|here|it|that|this|they)\b)|also|anyway|anyways|fyi|"
    r"on (?:a|another) (?:different|side|related)? ?note|"
    r"speaking of (?:which|that)|by the way|btw|oh|well|look at that|check it out|guess what|"
    r"as for me|"
    r"unfortunately|fortunately|luckily|sadly|honestly)"
    r"\b[,:!]?\s*(?:[-–—]\s*)?)+",
    re.IGNORECASE,
)
# A name called out before the statement: "Woah Joanna, I won", "John, those little things".
_END_VOCATIVE_RE = re.compile(r",\s*[A-Z][a-z]+\s*(?=[.!]*$)")
_VOCATIVE_RE = re.compile(r"^(?:(?:woah|whoa|wow|hey|hi|oh|yeah)\s+)?[A-Z][a-z]+,\s+(?=[a-zI])")
# A short label before a colon, naming no one: "Fun fact:", "Big news here:", "Update:".
_LABEL_RE = re.compile(r"^(?:(?!I\b|my\b|we\b|our\b)[\w']+\s+){0,2}[\w']+:\s+(?=\S)", re.I)
_SINCE_RE = re.compile(
    r",?\s*\bsince (?:(?:we|I) (?:last )?(?:chatted|talked|spoke|caught up)(?: last)?|"
    r"(?:our|the) last (?:chat|talk|conversation|catch-up))\b,?\s*",
    re.IGNORECASE,
)
# What leans on the sentence before it and says nothing alone: "Almost as silly as when ...".
_FRAGMENT_RE = re.compile(
    r"^(?:almost|just like|like|as|such|same|somewhat|similar|especially|even|not|no|which|who|"
    r"whose|than|reminds|"
    r"makes|seems|looky|"
    r"gonna|wanna|gotta)\b",
    re.IGNORECASE,
)
_MAX_WORDS = 45
_Turn = ev.Event | None  # a turn a reply is read with, if there is one
_FINITE = word_set(
    """
    i i'm i've i'd i'll we we're we've we'd we'll is are am was were be been has have do does
    """
)
_FINITE_RE = re.compile(
    r"\b\w{2,}(?:ed|[a-rt-z]s)\b|'s\b|'re\b|'ve\b|'m\b|'ll\b|n't\b"
    r"|\b(?!(?:to|for|with|of|about|at|from|like|by|on|in|and|or|than)\b)\w+ (?:me|us)\b"
)
# Verbs that open a sentence without its subject when it is an order or a thank-you.
_BARE_VERBS = word_set(
    """
    appreciate check love hope wish miss enjoy keep take let make try remember need want feel
    think know guess see look thank imagine sending say tell give have has had is are was were
    do does did can could will would should hoping wishing been don't doesn't can't won't
    """
)


def observations(
    event: ev.Event, user: str = "the user", previous: _Turn = None, earlier: _Turn = None
) -> list[Observation]:
    """What `event` says about its speaker worth noting: at most one observation. `user` names
    the vault's user (events with a role of USER_ROLES, or none); `previous` (the turn before)
    and `earlier` (answering.own_before) say what a reply's "the show" or "the idea" stands for."""
    owner = _owner(event, user)
    if owner is None:
        return []
    text = _IMAGE_RE.sub("", event.text)
    other = _owner(previous, user) if previous is not None else None
    before = previous.text if previous is not None and other not in (None, owner) else None
    chosen = _best_sentence(text, before, other or "", answering.said(earlier) if before else "")
    # "Here's a pic of my pottery!": what they showed, and whose
    chosen = photos.shared(chosen or text, event.text, alone=chosen is None) or chosen
    if chosen is None:
        return []
    # "I'm off to bake some cakes" at the end of a chat: the plan, not the leave-taking
    chosen = _OFF_TO_RE.sub("I'm going to ", chosen)
    # "My family and I went" → "Maria and their family went": the speaker named first
    chosen = re.sub(r"\b[Mm]y ((?:\w+ ){0,2}?\w+) and I\b", r"I and my \1", chosen)
    family = we_group.family(text, chosen)
    chosen = placed(chosen, text)
    said = third_person(chosen, owner, family=family, listener=(other or "") if before else "")
    said = re.sub(r"\b(they|" + re.escape(owner) + r") ands\b", r"\1 and", said)
    if event.at is not None:
        said = when.absolute(said, event.at)
        said = re.sub(r"(\d{4}-\d\d-\d\d)'s\b", r"\1 is", said)  # "Tomorrow's gonna be"
    end = re.compile(r"([.!?][\"”])?[\s.!,;:…-]*$")  # a quote's own stop ends the line: "X."
    said = end.sub(lambda m: m.group(1) or ".", said, count=1)
    said = said[0].upper() + said[1:]
    return [Observation(owner, said, event.at, event.id)]


def _owner(event: ev.Event, user: str) -> str | None:
    """Whose `event`'s observations are: `user` for the user's, None for the assistant's."""
    role = " ".join((event.role or "").split())
    no_one = role.casefold() in NOBODY_ROLES
    return None if no_one else user if not role or role.casefold() in USER_ROLES else role


def _best_sentence(text: str, previous: str | None, other: str, earlier: str) -> str | None:
    """The plain statement about the speaker that says the most (content words, a time, the
    speaker as its subject), read as a reply to `previous` (said by `other`) after their own
    `earlier` turn, made whole from them (repair.py); None when there is none."""
    best: tuple[int, str] | None = None
    # "Since I was 17" to "How long have you ...?", "Researching agencies" to "Any plans?"
    whole = answering.answered(text, previous) or doing.answered(text, previous)
    for raw in [*([whole] if whole else []), *pointing.candidates(text, previous, earlier)]:
        s = _statement(_CONJUNCTION_RE.sub("", _OPENER_RE.sub("", raw.strip()).strip()))
        s = answering.resolve(s, previous, other) if s is not None else None
        if s is None:
            continue
        words = [w for w in re.findall(r"[a-z']+", s.lower()) if w not in STOP_WORDS]
        done = bool(_SUBJECT_RE.match(s) and _words(s) & clauses.DONE_WORDS) or clauses.seen(s)
        if len(words) < _CONTENT_MIN - bool(done) - 2 * bool(_SHORT_RE.match(s)):
            continue  # "I made this bowl in my class": a deed says enough in fewer words
        score = len(words) + 3 * bool(_SUBJECT_RE.match(s)) + 2 * bool(_TIME_RE.search(s))
        score -= 2 * bool(_words(s) & _FEELINGS) + 100 * hollow.weak(s)
        if best is None or score > best[0]:
            best = (score, s)
    return repair.repaired(best[1], previous or "", earlier) if best else None


def _statement(s: str) -> str | None:
    """`s` when it is a plain statement about the speaker, else None. Of a sentence that also
    speaks to the listener, only the clauses about the speaker: "That made me think how I could
    help, so I joined a brigade" → "I joined a brigade"; "I took a road trip while you were
    winning" → "I took a road trip"."""
    s = _TAG_QUESTION_RE.sub("", s)  # "I started a store - pretty cool, huh?"
    s = hollow.unframed(s)  # "I wanted to let you know I ran a 5K", "..., take a look!"
    reaction = _REACTION_RE.match(s)
    after = _AFTER_REACTION_RE.search(s) if reaction else None
    if after is not None:  # "I totally get it, I had a mentor too": what follows is news
        s = s[after.end() :]
    if not s or "?" in s or (reaction and after is None) or len(s.split()) > _MAX_WORDS:
        return None
    s = clauses.subject(s)
    first = _FIRST_RE.search(s)
    if first is None:
        return None
    but = clauses.BUT_RE.search(s)
    resolve = but is not None and not {w for w in _content_words(but[1]) if w not in _ATTITUDE}
    if but is not None and resolve and not _OWN_RE.search(s[: but.start()]):
        return None  # "Looking for the place has been tough, but I'm determined": the speaker
        # is only in a resolve, and what it is about is in what came before
    listener = _LISTENER_RE.search(s)
    if listener is not None and listener.start() < first.start():
        clause = next(_CLAUSE_START_RE.finditer(s, listener.end()), None)
        if clause is None:
            return None
        s = s[clause.end() :]
        listener = _LISTENER_RE.search(s)
    if listener is not None:
        ends = [m.start() for m in _CLAUSE_END_RE.finditer(s, 0, listener.start())]
        then = _THEN_DID_RE.search(s, listener.end())
        if ends:
            s = s[: ends[-1]]
        elif then is not None and s.lstrip().startswith("I "):
            # "I took your advice and watched the trilogy": what they did next is theirs
            s = "I " + s[then.end() :]
            listener = _LISTENER_RE.search(s)
            if listener is not None:
                ends = [m.start() for m in _CLAUSE_END_RE.finditer(s, 0, listener.start())]
                if not ends:
                    return None
                s = s[: ends[-1]]
        else:
            return None
        # "... watching it, but talking" (to you ...): a clause cut after its first word goes
        s = _DANGLING_RE.sub("", s)
    s = _SINCE_RE.sub(lambda m: " " if s[m.end() : m.end() + 1].isalnum() else "", s).strip()
    s = _LEAD_RE.sub("", s).strip()
    s = _LABEL_RE.sub("", s)  # "Big news here: we got a cat"
    s = re.sub(r",?\s*(?:(?:so|and)\s+)?let's\b.*$", "", s, flags=re.I)  # ", so let's do it"
    s = _VOCATIVE_RE.sub("", s)  # "John, those little things ..."
    s = _END_VOCATIVE_RE.sub("", s)  # "I've had tough times with my store, Jon."
    s = clauses.subject(s)
    if _SEEN_RE.search(s):
        return None  # "I love the yellow leaves, it looks so cozy": about what one was shown
    # "Especially after I failed the test, I've been stressed": a clause of its own follows
    especially = s.lower().startswith("especially ") and "," in s and _main_clause(s)
    fragment = _FRAGMENT_RE.match(s) and not especially
    if not _OWN_RE.search(s) or _REACTION_RE.match(s) or fragment:
        return None
    if _POINTER_RE.match(s) and not _PAST_SCENE_RE.match(s) and not expletive.judged_deed(s):
        # "It took time, but I slowly formed connections": the part about the speaker
        clause = _CLAUSE_START_RE.search(s)
        s = s[clause.end() :] if clause is not None else ""
        if len(s.split()) < _MIN_WORDS:
            return None
    s = likeness.unlikened(s)  # "a little doll like this": the doll is named
    leans = leaning.leaning(s)
    if leans is None and (hollow.hollow(s) or unanchored.unanchored(s)):
        return None  # "I'll cherish that little guy", "We've come so far": nothing named
    if leans is not None:
        # "I love DIYs, and I know she does too": the clause before the one that leans
        cut = [m.start() for m in _COORDINATE_RE.finditer(s) if m.start() < leans]
        return _statement(s[: cut[-1]]) if cut else None
    if _generic(s) or not _clause(s):
        return None
    if _SUBORDINATE_RE.match(s) and "," not in s and not _main_clause(s):
        return None  # "Last time we saw each other": the clause it led into was cut
    # A deed with its time says enough in four words: "I graduated last week".
    timed = _SUBJECT_RE.match(s) and _TIME_RE.search(s)
    if len(s.split()) < _MIN_WORDS - bool(timed) and not _SHORT_RE.match(s):
        return None
    s = _HEDGE_TAIL_RE.sub("", s) if len(_HEDGE_TAIL_RE.sub("", s).split()) >= _MIN_WORDS else s
    hedge = hedges.hedging(s)
    if hedge:  # "I'm thinking about starting a project, so maybe we can work together"
        cut = [m.start() for m in _COORDINATE_RE.finditer(s) if not _words(s[: m.start()]) & hedge]
        s = s[: cut[-1]] if cut and len(s[: cut[-1]].split()) >= _MIN_WORDS else s
    # "When I was younger, we had money problems": a past told whole; "When times get hard, I
    # look at it" is a habit, and a "when" alone a cut clause
    past = re.match(r"when\s[^,]*\b(?:was|were|\w+ed)\b[^,]*,", s, re.I)
    when_clause = s.lower().startswith("when ") and not (past and _main_clause(s))
    if when_clause or s.lower().startswith(("what if", "let's")) or hedges.hedging(s):
        return None
    if not {w for w in _content_words(s) if w not in _ATTITUDE}:
        return None  # only a resolve or a feeling: "I'm going for my dreams!"
    feeling = _FEELING_RE.match(s)
    if feeling and _OF_NOTHING_RE.match(s[feeling.end() :]):
        return None  # "I'm feeling so motivated and supported, ...": a mood, of nothing
    if _BELIEF_RE.search(s):
        return None
    if re.search(r"\w-\s", s):  # "I do- Oscar": a broken phrase
        return None
    content = [w for w in _words(s) if w not in STOP_WORDS]
    if _POINTER_END_RE.search(s) and len(content) <= _POINTER_CONTENT_MAX:
        return None
    return _HERE_RE.sub("", s)  # "I started volunteering here a year ago": where only they see


def _main_clause(s: str) -> bool:
    """Whether a sentence opening on "when", "after" ... has a clause of its own after the one
    it opens: a second subject ("Since I'm allergic I'm trying oat milk"), or one after a
    gerund ("After finishing my script I got a rejection")."""
    subjects = re.findall(r"\b(?:I|I'm|I've|I'd|I'll|[Ww]e|[Ww]e're|[Ww]e've)\b", s)
    gerund = re.match(r"\w+(?:\s+\w+)?\s+\w+ing\b", s)
    return len(subjects) >= 2 or (gerund is not None and len(subjects) >= 1)


def _clause(s: str) -> bool:
    """Whether `s` is a whole clause: a verb in it ("A gift from my grandma" is none), and not
    opening on one without its subject ("Appreciate the support", "Check my new studio": an
    order or a thank-you)."""
    first = re.search(r"[\w']+", s)
    if first is None or first.group().lower() in _BARE_VERBS:
        return False
    if first.group().lower() in AS_IS or re.fullmatch(r"[a-z]+ed", first.group().lower()):
        return False  # "Started when I was young": a deed without its doer
    if re.match(r"\W*[A-Za-z]+[a-rt-z]s\s+(?:me|us|my)\b", s):
        return False  # "Gives me a visual of my progress": what gives it is left out
    words = _words(s)
    return bool(words & (AS_IS | _FINITE) or _FINITE_RE.search(s))


def _generic(s: str) -> bool:
    """A maxim in "we" and "our" about people at large ("Our loved ones give us strength", "We
    can make a difference"): no "I" or "my", nothing done (no past tense, no "have done"), and
    said of anyone (a modal, "us", "together"); "We always look forward to our family camping
    trip" is the speaker's family."""
    words = _words(s)
    if words & _SINGULAR:
        return False
    if not words & _WE and not _OUR_RE.match(s):
        return True  # "Pets have a way of brightening our days": "our" is anyone's
    done = (w for w in words if w not in _MODALS)
    if any(w in AS_IS or w in ("we've", "'ve") for w in done) or _WE_DID_RE.search(s):
        return False
    return bool(words & (_MODALS | _ANYONE | word_set("we'll we'd")))


def _content_words(s: str) -> list[str]:
    """The words of `s` that are not stop words nor the pronouns of the speaker."""
    words = re.findall(r"[a-z']+", s.replace("’", "'").lower())
    return [w for w in words if w not in STOP_WORDS and w not in _FIRST_PERSON]


def _words(s: str) -> set[str]:
    return set(re.findall(r"[a-z']+", s.replace("’", "'").lower()))
