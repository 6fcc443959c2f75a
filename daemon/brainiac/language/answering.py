"""A turn read with the turn before it: what a sentence that answers the other speaker points at.

A reply often names its thing by what the other speaker just said: "My show is on Friday!" →
"I'm definitely in for the show" (the show is theirs); "What made you pick that color?" → "I
picked this color because it's bright" (the color of what? the question's thing, which the
reply never names). Read alone, as an observation is, the first says whose show only with the
turn before it, the second says nothing. So, given the previous turn:

- "the X" the other speaker called "my X" is theirs ("Jon's show"), "your X" the speaker's own
  ("my show"): the line names whose it is, as the exchange did;
- "this X", "that X", "these X" or "those X" is the speaker's X the other speaker named as
  "your X" ("your new hair color" → "I picked this color" is "my new hair color"), when they
  named exactly one; else, when they asked about an X, it points at what was asked about and is
  not in the reply: the sentence is no observation alone;
- "I love the X" when the other speaker just shared a photo is a reaction to it, not news;
- "I'm in for the X" whose X the other speaker never called theirs says yes to nothing named;
- a reply of a few words to how long, how often or how many times ("How long have you been
  married?" "5 years already!") is made whole from the question: "I've been married for 5 years
  already".
- what the speaker did, naming nothing ("We played games and ate good food"), in reply to a
  question about "it" or "there" ("How was it?", "What do you do there?") is put at the one place
  the turn before pointed at ("that playground looks cool" → "... at the playground"); with no
  such place, what "we" did is no observation (at what?) and what "I" did stays as it was said.

Only the turn just before, by the other speaker, is read: what it says is the context a listener
has. Pure text: no I/O.
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
from collections.abc import Iterable

from brainiac.formats import events as ev
from brainiac.language.lexicon import word_set

# A thing the other speaker owns or gave to the speaker: "my show", "your new hair" (each of the
# two words after "my" may be the noun).
_OWNED_RE = re.compile(
    r"\b(?P<whose>my|your|our)\s+(?P<noun>[a-z][a-z'-]+)(?:\s+(?P<second>[a-z][a-z'-]+))?",
    re.IGNORECASE,
)
# A taste for a thing named by "the" or pointed at: said of a photo just shown, a reaction to it.
_LIKED_RE = re.compile(
    r"^I\s+(?:\w+ly\s+|just\s+)?(?:love|like|adore|dig)\s+(?:the|that|this|those|these|how)\b", re.I
)
# "Marrying my partner was the best part (of ...)": a deed judged the best part of something.
_PART_RE = re.compile(
    r"^(?P<act>[A-Z]?[a-z]+ing\b[^.!?]*?)\s+(?:was|is)\s+(?:(?:definitely|probably|really|"
    r"honestly)\s+)?(?P<whose>the|my)\s+"
    r"(?P<part>(?:best|favou?rite|most \w+|coolest|hardest)\s+part)"
    r"(?P<of>\s+(?:of|about)\s+[^.!?]+?)?\W*$",
    re.IGNORECASE,
)
# The thing a question asks the part of ("the best part of your trip?"), or one exclaimed over
# ("What a great day!").
_THING_RE = re.compile(
    r"\bpart\s+(?:of|about)\s+(?:your|the|that|this)\s+(?P<noun>[a-z-]+)", re.IGNORECASE
)
_EXCLAIMED_RE = re.compile(r"\bwhat an?\s+(?:[a-z-]+\s+){0,2}?(?P<noun>[a-z-]+)\s*!", re.I)
# Saying yes to what was just offered, with the thing only "the X": "I'm definitely in for the
# show" (when the other called it "my show" it reads "Jon's show" and stays).
_IN_FOR_RE = re.compile(
    r"^I(?:'m| am)\s+(?:(?:so|definitely|totally|absolutely|\w+ly)\s+)*in\s+for\s+the\s+"
    r"[a-z-]+\W*$",
    re.IGNORECASE,
)
_THE_RE = re.compile(r"\bthe\s+(?P<noun>[a-z][a-z'-]+)\b", re.IGNORECASE)
_POINTED_RE = re.compile(r"\b(?:this|that|these|those)\s+(?P<noun>[a-z][a-z'-]+)\b", re.I)
_WORD_RE = re.compile(r"[a-z][a-z'-]+")
_NAME_RE = re.compile(r"(?<=\w\s)(?!I\b)[A-Z]")  # a name after the sentence's first word
# What "this" or "that" before it makes a time, not a thing: "this weekend", "this next tourney".
_TIMES = word_set(
    "time times day days week weeks weekend month months year years morning afternoon evening "
    "night summer winter spring fall autumn season next last past first"
)


def resolve(sentence: str, previous: str | None, other: str) -> str | None:
    """`sentence` (said in the first person, in reply to `previous`, said by `other`) with
    "the X" that `previous` called "my X" said as `other`'s and "your X" as the speaker's;
    None when it points ("this X") at the thing `previous` asked about. `sentence` as it is
    without a previous turn."""
    part = _PART_RE.match(sentence)
    if part is not None:  # "Marrying my partner was the best part": the part of what, first
        first = _part_first(part, previous or "")
        if first is None:
            return None  # "Seeing my characters come alive was my favorite part": of what?
        sentence = first
    if not previous:
        return sentence
    if "[image:" in previous and _LIKED_RE.match(sentence) and not _NAME_RE.search(sentence):
        return None  # "I love the self-acceptance theme" of a painting just shown: a reaction
    sentence = _POINTED_RE.sub(lambda m: _yours(m, previous), sentence)
    asked = {_stem(w) for q in questions(previous) for w in _WORD_RE.findall(q.lower())}
    for m in _POINTED_RE.finditer(sentence):
        noun = m.group("noun").lower()
        # "this weekend" is a time; "Street Fighter ... that game": the sentence names it
        named = _NAME_RE.search(sentence, 0, m.start())
        if _stem(noun) in asked and noun not in _TIMES and named is None:
            return None  # "I picked this color" in reply to "Why that color?": the color of what?
    owners: dict[str, str] = {}
    for m in _OWNED_RE.finditer(previous):
        whose = m.group("whose").lower()
        mine = "my" if whose == "your" else f"{other}'s" if whose == "my" else ""
        for noun in (w.lower() for w in (m.group("noun"), m.group("second")) if w):
            # said of both, or "our": whose is not clear
            owners[noun] = mine if owners.get(noun, mine) == mine else ""
    said = _THE_RE.sub(lambda m: _owned(m, owners), sentence)
    if _IN_FOR_RE.match(said):
        return None  # "I'm definitely in for the show": whose show or what, the turn never says
    # "How was it? Anything fun?": any question of the turn may be the one about "it"
    asked_it = [q for q in questions(previous) if _ASKED_IT_RE.search(q)]
    if asked_it and _NOTHING_NAMED_RE.match(said):
        return _there(said, previous, asked_it[0])
    return said


def _there(said: str, previous: str, question: str) -> str | None:
    """What the speaker did, named by nothing, said in reply to a question about "it" or
    "there", put at the one place the turn before named ("That playground looks cool! What do
    you do there?" "We love climbing" → "We love climbing at the playground"; "... at the
    shelter. How did you manage that?" "I listened" → "I listened at the shelter"). With no
    single place, what "we" did is no line (read alone: at what?); what "I" did stays."""
    before = previous[: previous.rfind(question)]
    places = {
        (
            (m.group("det") or m.group("at")).lower(),
            " ".join(w for w in (m.group("noun") or m.group("at_noun"), m.group("second")) if w),
        )
        for m in _PLACE_RE.finditer(before)
        if (m.group("noun") or m.group("at_noun")).lower() not in _TIMES | {"moment", "end"}
    }
    if len(places) != 1:
        return said if said.startswith("I") else None
    det, noun = places.pop()
    return f"{said.rstrip(' .!')} at {'my' if det == 'your' else 'the'} {noun}"


# A question whose thing is only a pronoun: "How was it?", "What was the best part of it?",
# "What did you do there?", "Is it more of a team game?". What it stands for is in a turn before
# it, or in a photo.
_ASKED_IT_RE = re.compile(
    r"(?:\b(?:of|about|with|do|did|doing|from|at)\s+(?:it|that|there|this)|"
    r"\bhow\s+(?:was|is|did)\s+it(?:\s+go)?)\s*\?\s*$"
    r"|^\W*(?:\w+\W+){0,3}?(?:is|was|does|did)\s+(?:it|that)\b[^?]*\?\s*$",
    re.IGNORECASE,
)
# What "we" did, named by nothing: no name, no title, no thing after a determiner, no time:
# "We played games, ate good food, and just hung out together".
_NOTHING_NAMED_RE = re.compile(
    r"^(?:[Ww]e|I)(?:'ve|'re|'m| all| both| just| really| even| slowly| finally)*\s+"
    r"(?!.*\b(?:a|an|the|my|our|his|her|their|this|that|these|those|some|\d+)\s)"
    r"(?!.*(?<=\w\s)[A-Z])(?!.*[\"“])"
    r"(?!.*\b(?:yesterday|today|tonight|last|ago|week|weekend|month|year)\b)[^.!?]*\W*$"
)


# A place the turn before points at: "that playground looks cool", "your new studio".
_PLACE_RE = re.compile(
    r"\b(?P<det>that|this|the|your)\s+(?:(?:new|little|local|old|big)\s+)?(?P<noun>[a-z]{3,})\b"
    r"(?=\s+(?:looks|is|was|seems|sounds)\b)"
    r"|\bat\s+(?P<at>the|your)\s+(?:(?:new|little|local|old|big)\s+)?(?P<at_noun>[a-z]{3,})"
    r"(?:\s+(?P<second>shelter|center|centre|park|school|studio|club|gym|hospital|library|"
    r"church|market|fair|festival|camp|museum))?\b",
    re.IGNORECASE,
)


# A question about the listener's own life a reply may answer in a few words ("How long have
# you been married?" "5 years already!"), and the answer such a reply opens on: how long, how
# often, how many times.
_ASKED_RE = re.compile(
    r"^\s*(?:how long have you (?P<long>been|had) (?P<long_what>[^?]+?)"
    r"|how often do you (?P<often>[^?]+?)"
    r"|have you (?:ever )?been (?P<been>[^?]+?)(?: before)?"
    r"|(?:also,?\s+|so,?\s+)?do you (?P<like>like|love|enjoy) (?P<like_what>[^?]+?))\s*\?+\s*$",
    re.IGNORECASE,
)
# Yes to "do you like ...?", in a sentence of its own: "Yeah, I love to.", "I do!"
_LIKE_RE = re.compile(
    r"(?:^|[.!]\s+)" + r"(?:(?:yes|yeah|yep|yup|sure|oh|definitely|totally)\b[,!.]?\s*)*"
    r"I (?P<verb>love|like|enjoy|adore|do)(?:\s+(?:to|it|them|that))?\s*(?:[.!]|$)",
    re.IGNORECASE,
)
_YES = r"(?:(?:yes|yeah|yep|yup|sure|oh|definitely|totally)\b[,!.]?\s*)*"
_HOW_LONG_RE = re.compile(
    _YES + r"(?P<ans>(?:since|for|about|around|almost|over|nearly|\d+|one|two|three|four|five|six|"
    r"seven|eight|nine|ten|a few|a couple of)\b[^.!?;,]*)",
    re.IGNORECASE,
)
_HOW_OFTEN_RE = re.compile(
    _YES + r"(?P<ans>(?:about |around |at least |usually |mostly )?(?:once|twice|"
    r"(?:\d+|two|three|four|five|six|a few|a couple of) times|every)\b[^.!?;,]*)",
    re.IGNORECASE,
)
_TIMES_RE = re.compile(
    _YES + r"(?P<ans>(?:plenty of|many|a few|lots of|several|a couple of|so many|loads of|"
    r"a bunch of|countless) times)\b",
    re.IGNORECASE,
)
_CAPTION_RE = re.compile(r"\s*\[image: [^\]]*\]\s*$")
_THANKS_RE = re.compile(r"^(?:(?:thanks|thank you|aw+|haha|lol|wow)\b[^.!?]*[.!?]+\s*)+", re.I)
_YOURS = {"you": "I", "your": "my", "yours": "mine", "yourself": "myself", "you've": "I've"}


def answered(reply: str, previous: str | None) -> str | None:
    """The reply made whole from the question it answers, when it opens on a few words that
    answer how long, how often or how many times ("How long have you been painting?" "Since I
    was 17." → "I've been painting since I was 17"); None when it does not. The question is the
    other speaker's last one, about the listener ("you"), said back as the speaker's own."""
    asked = questions(previous or "")
    m = _ASKED_RE.match(asked[-1]) if asked else None
    if m is None:
        return None
    if m.group("like"):  # "Do you like painting animals?" "Yeah, I love to." in the reply
        yes = _LIKE_RE.search(reply)
        verb = m.group("like") if yes is None or yes.group("verb") == "do" else yes.group("verb")
        return f"I {verb.lower()} {_mine(m.group('like_what'))}" if yes else None
    # the answer opens the reply, or follows a thank-you: "Thanks! Three times a week."
    reply = _THANKS_RE.sub("", reply)
    if m.group("long"):
        a, head = _HOW_LONG_RE.match(reply), f"I've {m.group('long')} {_mine(m.group('long_what'))}"
    elif m.group("often"):
        what = _mine(m.group("often"))  # "you all" asked is "we" said back
        head = f"We {what[4:]}" if what.startswith("all ") else f"I {what}"
        a = _HOW_OFTEN_RE.match(reply)
    else:
        a, head = _TIMES_RE.match(reply), f"I've been {_mine(m.group('been'))}"
    if a is None:
        return None
    ans = a.group("ans").strip()
    ans = ans[0].lower() + ans[1:]
    if m.group("long") and not re.match(r"(?:since|for)\b", ans):
        ans = "for " + ans  # "5 years already" → "for 5 years already"
    return f"{head} {ans}"


def _mine(words: str) -> str:
    """A question's words about "you" said by the one asked: "your walks" → "my walks"."""
    return re.sub(
        r"\b(?:you've|yourself|yours|your|you)\b",
        lambda w: _YOURS[w.group(0).lower()],
        " ".join(words.split()),
        flags=re.IGNORECASE,
    )


def turns_before(events: Iterable[ev.Event]) -> dict[str, ev.Event]:
    """The turn before each of `events` (by id) in its session, among `events`, in time order:
    what a reply answers. An event said outside a session, or undated, has none."""
    sessions: dict[tuple[str, str | None], list[tuple[dt.datetime, ev.Event]]] = {}
    for e in events:
        if e.session and e.at is not None:
            sessions.setdefault((e.session, e.project), []).append((e.at, e))
    before: dict[str, ev.Event] = {}
    for timed in sessions.values():
        turns = [e for _, e in sorted(timed, key=lambda t: t[0])]
        before.update((b.id, a) for a, b in itertools.pairwise(turns))
    return before


def said(turn: ev.Event | None) -> str:
    """What `turn` says, without the caption of an image it shared (a model's guess, not the
    speaker's words); "" for no turn."""
    return _CAPTION_RE.sub("", turn.text) if turn is not None else ""


def own_before(events: Iterable[ev.Event]) -> dict[str, ev.Event]:
    """The speaker's own turn before the one each of `events` (by id) answers, in its session:
    of "I made coconut milk ice cream" / "Will you give it another go?" / "I'm looking forward
    to trying out other flavors", the first, where the thing a reply leaves unnamed was named.
    None when the turn before is the speaker's own too (then nothing was asked in between)."""
    turns = list(events)
    before = turns_before(turns)
    earlier: dict[str, ev.Event] = {}
    for event in turns:
        asked = before.get(event.id)
        own = before.get(asked.id) if asked is not None else None
        if asked is not None and own is not None and own.role == event.role != asked.role:
            earlier[event.id] = own
    return earlier


def _part_first(m: re.Match[str], previous: str) -> str | None:
    """ "Marrying my partner was the best part" as "The best part of my day was marrying my
    partner": the part of the one thing `previous` exclaimed over ("what a great day!") or asked
    about ("the best part of your trip?"), the deed after it, so that "my" is not read as the
    subject's; None when the part is of nothing said (read alone, the part of what?)."""
    of = m.group("of")
    if not of:
        asked = [q for q in questions(previous) if re.search(r"\bpart\b", q, re.I)]
        things = {
            t.group("noun").lower()
            for t in _THING_RE.finditer(" ".join(asked) if asked else "")
            if t.group("noun").lower() not in _TIMES | {"part"}
        }
        if not things and asked:  # "What a great day! ... What was your favorite part?"
            things = {t.group("noun").lower() for t in _EXCLAIMED_RE.finditer(previous)}
        if len(things) != 1:
            return None  # the part of what, neither the turn nor the one before says
        of = f" of my {next(iter(things))}"
    act = m.group("act")
    whose = m.group("whose").title()
    return f"{whose} {m.group('part').lower()}{of} was {act[0].lower()}{act[1:]}"


def _yours(m: re.Match[str], previous: str) -> str:
    """ "this color" as "my new hair color" when `previous` (the other speaker's) called exactly
    one thing of that noun "your new hair color": what the reply points at is named."""
    noun = m.group("noun")
    if noun.lower() in _TIMES:
        return m.group(0)
    yours = re.compile(rf"\byour\s+((?:[a-z'-]+\s+){{0,2}}?){re.escape(noun)}s?\b", re.I)
    said = {" ".join(y.group(1).lower().split()) for y in yours.finditer(previous)}
    if len(said) != 1:
        return m.group(0)
    words = next(iter(said))
    return f"my {words} {noun}" if words else f"my {noun}"


def _owned(m: re.Match[str], owners: dict[str, str]) -> str:
    whose = owners.get(m.group("noun").lower())
    return f"{whose} {m.group('noun')}" if whose else m.group(0)


def questions(text: str) -> list[str]:
    """The questions of `text`: each sentence ending in a question mark."""
    return re.findall(r"[^.!?]*\?", text)


def _stem(word: str) -> str:
    """A plural and its singular alike: "colors" and "color"."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word
