"""What a group of events is about, as a person would say it: key phrases, and the sentences.

A note's title should name its topic ("Dance studio and clothing store"), not list keywords
("dance, studio, gina") or repeat a session label; its summary should quote what was said, not
count words. Both come from the events themselves, without a model and without a word list from
outside the vault:

- **key phrases** are runs of content words inside one clause ("pottery class", "adoption
  agencies"). The phrase that names the group starts from the content word said in the most
  events, and grows into the longest run around it that is said almost as often: one word a
  person would not title a note with (an opinion, a filler, a speaker's name) is never a topic.
- **summary sentences** are whole sentences from the events, verbatim, chosen for how much of
  the group's vocabulary they carry (a statement, not a question or a greeting).

Pure functions, fast enough to run on every promotion.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

from brainiac.language import extract, lexicon

# Words that say how someone feels or keep a conversation going: frequent in every chat, never
# what one is about. (Added to `lexicon.STOP_WORDS` and its opinions; generic English, not words
# of one conversation.)
_GENERIC = lexicon.word_set(
    """
    love loved loves like liked likes feel feels felt feeling feelings happy glad excited
    thankful grateful proud sorry hope hoping wish glad super awesome amazing cool wonderful
    incredible fantastic beautiful lovely gorgeous cute sweet kind special tough hard
    lot lots bit kind sort way ways thing things stuff something everything anything nothing
    time times day days week weeks month months year years today yesterday tomorrow tonight
    moment moments life people person everyone someone anyone folks guys
    new old big little small good great nice fun best better last next first
    going doing getting making taking having seeing trying looking talking thinking saying
    told tell talk talked said say says asked ask tried try want wanted need needed got get
    make made take took give gave keep kept see saw seen look looked come came go went gone
    know knew find found help helped share shared sharing chat chatting catch caught
    awesome congrats congratulations wow yay omg haha hey hi hello thanks thank
    sounds sound seems looks mean means meant bet reach reaching totally definitely
    image photo picture pic pics shows showing check
    important together positive negative difference experience experiences appreciate
    appreciated inspiring inspired inspire motivated motivate motivation lucky young real able
    sure true hear heard show reminds remind reminded express stay staying pushing keeping
    enjoy enjoyed enjoying blast vibe vibes news update chance idea ideas bummer favorite
    favourite fave favorites favourites happened
    part parts step steps source sources type piece side end rest half matter kinds sorts
    """
)
# "[image: a photo of ...]": the label of an attachment, not what was said
_BRACKETED_LABEL_RE = re.compile(r"\[\w+:\s*")
_CLAUSE_SPLIT_RE = re.compile(r"[,;:.!?()\[\]\"“”—–]|\s-\s")
_TOKEN_RE = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
# Adverbs and adjectives by their ending ("really", "helpful", "nervous", "creative", "adorable").
_NOT_A_TOPIC_ENDINGS = ("ly", "ful", "ous", "ive", "able", "ible")
# ("that" is as often a relative pronoun, "something that keeps", so it marks no thing)
_DETERMINERS = lexicon.word_set("a an the my your our his her their this these those some")
_VERB_CUES = lexicon.word_set(
    "i you we they he she it to that which who so very really too pretty super quite"
)
_OBJECTS = lexicon.word_set("it me us them him")
_AFTER_PARTICIPLE = lexicon.word_set(
    "in on at with by near under over next through into onto from around behind beside along "
    "across up down out off the a an"
)
_VAGUE_NOUNS = lexicon.word_set(
    "piece pieces thing things kind sort type bit one ones part stuff way"
)
_BE = lexicon.word_set("am is are was were be been being i'm you're we're they're it's")
_MAX_PHRASE_WORDS = 3
_MIN_SENTENCE_WORDS = 5
_MAX_SENTENCE_WORDS = 35


def _content(word: str, exclude: frozenset[str]) -> bool:
    low = word.lower()
    return (
        len(low) >= 3
        and "'" not in low
        and "’" not in low
        and low not in lexicon.STOP_WORDS
        and low not in _GENERIC
        and not is_speaker_word(low, exclude)
        and not (len(low) > 4 and low.endswith(_NOT_A_TOPIC_ENDINGS))
    )


def names_what(phrase: str) -> bool:
    """Whether a goal or task ("Run a marathon", "Read more") says what it is beyond its verb,
    read alone weeks later: "Visit", "Hear", "Savor all the good vibes", "Prepare emotionally"
    say only a verb, a feeling, a filler or an adverb."""
    words = _TOKEN_RE.findall(phrase)
    if len(words) < 2:
        return False
    rest = [w for w in words[1:] if w.lower() not in lexicon.STOP_WORDS]
    return not rest or any(_content(w, frozenset()) for w in rest)


def _runs(
    text: str,
    exclude: frozenset[str],
    nouns: Counter[str] | None = None,
    verbs: Counter[str] | None = None,
) -> list[list[str]]:
    """Runs of consecutive content words within one clause, as written. The last word of a run
    that follows a determiner ("my pottery class", "the beach") is counted in `nouns`: a thing,
    where a run after anything else may be a verb or an adjective ("felt lucky"). A word after a
    subject, "to", "so" or "very", or an "-ing" form after a form of "be", is counted in `verbs`
    ("it makes", "to capture", "so calming", "was sitting")."""
    runs: list[list[str]] = []
    for clause in _CLAUSE_SPLIT_RE.split(_BRACKETED_LABEL_RE.sub(" ", text)):
        run: list[str] = []
        after_determiner = False
        previous = ""
        for m in _TOKEN_RE.finditer(clause):
            word = m.group().removesuffix("'s").removesuffix("’s")
            low = word.lower()
            if verbs is not None and (
                previous in _VERB_CUES or (previous in _BE and low.endswith("ing"))
            ):
                verbs[low] += 1
            if _content(word, exclude):
                if not run:
                    after_determiner = previous in _DETERMINERS or (
                        # "instead of sitting": a verb after "of"; "a cup of tea": a thing
                        previous == "of" and not low.endswith("ing")
                    )
                run.append(word)
            elif run:
                _close(run, runs, after_determiner, nouns, verbs, low)
                run = []
            previous = m.group().lower().replace("’", "'")
        if run:
            _close(run, runs, after_determiner, nouns, verbs, "")
    return runs


def _close(
    run: list[str],
    runs: list[list[str]],
    after_determiner: bool,
    nouns: Counter[str] | None,
    verbs: Counter[str] | None,
    next_word: str,
) -> None:
    runs.append(run)
    if not after_determiner or nouns is None:
        return
    last = run[-1].lower()
    if next_word in _VAGUE_NOUNS:
        return  # "a unique piece", "a special kind": it describes a thing left unnamed
    # "a dog sitting in", "a horse painted on", "your photos capture it": the thing, then what
    # it does ("my horse painting I did" is a painting)
    participle = last.endswith(("ing", "ed")) and next_word in _AFTER_PARTICIPLE
    if len(run) > 1 and (participle or next_word in _OBJECTS):
        nouns[run[-2].lower()] += 1
        if verbs is not None:
            verbs[last] += 1
        return
    nouns[last] += 1


def speaker_words(exclude: Iterable[str]) -> frozenset[str]:
    """The words of `exclude` (speakers' names), and what they are called for short: "Mel"."""
    words = {w.lower() for x in exclude for w in x.split()}
    return frozenset(words)


def is_speaker_word(word: str, banned: frozenset[str]) -> bool:
    """Whether `word` is one of `speaker_words`, or the start of one ("mel", "jo"): what
    promotion also asks before a name founds an entity note."""
    return word in banned or (len(word) >= 2 and any(b.startswith(word) for b in banned))


def key_phrases(texts: Iterable[str], n: int = 2, exclude: Iterable[str] = ()) -> list[str]:
    """Up to `n` phrases naming what `texts` are about, most telling first, no word in two of
    them. `exclude`: words that are never a topic here (the speakers' names)."""
    banned = speaker_words(exclude)
    said_in: Counter[tuple[str, ...]] = Counter()  # in how many texts each n-gram occurs
    spelling: dict[tuple[str, ...], str] = {}
    first: dict[tuple[str, ...], int] = {}
    said_as_thing: Counter[str] = Counter()
    said_as_verb: Counter[str] = Counter()
    for text in texts:
        grams: set[tuple[str, ...]] = set()
        for run in _runs(text.replace("’", "'"), banned, said_as_thing, said_as_verb):
            for k in range(len(run)):
                for m in range(k + 1, min(len(run), k + _MAX_PHRASE_WORDS) + 1):
                    gram = tuple(w.lower() for w in run[k:m])
                    grams.add(gram)
                    written = " ".join(run[k:m])
                    # Lower case wherever it was once written so: "Writing" opened a sentence.
                    if gram not in spelling or written[:1].islower():
                        spelling[gram] = written
                    first.setdefault(gram, len(first))
        said_in.update(grams)
    # A thing: said after "a", "the", "my" more often than as a verb or an adjective ("this
    # makes" once, "it makes" three times: a verb).
    nouns = {w for w, n in said_as_thing.items() if n > said_as_verb[w]}

    def weight(g: tuple[str, ...]) -> float:
        # A word never seen as a thing (after "a", "my", "the") counts half: likely a verb or
        # an adjective, which names no topic.
        return said_in[g] * (1.0 if g[0] in nouns else 0.5)

    chosen: list[str] = []
    used: set[str] = set()

    # Words said before a thing in a phrase ("pottery" in "the pottery class"): part of a name
    # for a thing, not a verb.
    naming = {w for g in said_in if len(g) > 1 and g[-1] in nouns for w in g}
    naming -= set(said_as_verb)  # "a unique hoodie", and "so unique": it describes

    def tier(g: tuple[str, ...]) -> int:
        # A thing said twice, then a thing said once or a word that names one; a verb or an
        # adjective ("makes", "sitting") names the topic only when no thing is said at all.
        if g[0] in nouns:
            return 0 if said_in[g] >= 2 else 1
        return 1 if said_in[g] >= 2 and g[0] in naming else 2

    singles = sorted(
        (g for g in said_in if len(g) == 1),
        key=lambda g: (tier(g), -weight(g), -len(g[0]), first[g]),
    )
    for single in singles:
        if len(chosen) >= n:
            break
        if single[0] in used:
            continue
        if chosen and (weight(single) < 2 or single[0] not in nouns):
            break  # a second topic only when it is a thing that comes up more than once
        phrase = _grow(single, said_in, first, nouns)
        if used & set(phrase):
            continue
        used |= set(phrase)
        chosen.append(spelling[phrase])
    return chosen


def _grow(
    single: tuple[str, ...],
    said_in: Counter[tuple[str, ...]],
    first: dict[tuple[str, ...], int],
    nouns: set[str],
) -> tuple[str, ...]:
    """The longest phrase around a word that is said in at least a third of the texts the word
    is (and twice at least), ending in a thing: "studio" said 8 times, "dance studio" 5 times:
    "dance studio"; "music brings" ends in a verb and stays "music"."""
    floor = max(2, (said_in[single] + 2) // 3)
    longer = [
        g
        for g in said_in
        if len(g) > 1 and single[0] in g and said_in[g] >= floor and g[-1] in nouns
    ]
    if not longer:
        return single
    return max(longer, key=lambda g: (len(g), said_in[g], -first[g]))


def title(texts: Sequence[str], exclude: Iterable[str] = ()) -> str:
    """A title naming the topic of `texts`: "Dance studio and clothing store", "" when none is
    said (nothing but small talk)."""
    phrases = key_phrases(texts, 2, exclude)
    if not phrases:
        return ""
    text = " and ".join(phrases)
    return text[0].upper() + text[1:]


def summary_sentences(
    texts: Sequence[str], n: int = 2, exclude: Iterable[str] = ()
) -> list[tuple[int, str]]:
    """Up to `n` sentences, verbatim, that say most of what `texts` are about, as (index of the
    text, sentence), in the order they were said. Statements only: no question, no greeting."""
    banned = speaker_words(exclude)
    weight: Counter[str] = Counter()
    for text in texts:
        weight.update({w.lower() for run in _runs(text, banned) for w in run})
    scored: list[tuple[float, int, int, str]] = []
    for i, text in enumerate(texts):
        for k, sentence in enumerate(extract.sentences(_BRACKETED_LABEL_RE.split(text)[0])):
            words = sentence.split()
            if not _MIN_SENTENCE_WORDS <= len(words) <= _MAX_SENTENCE_WORDS:
                continue
            if sentence.rstrip().endswith("?"):
                continue
            content = {w.lower() for run in _runs(sentence, banned) for w in run}
            if not content:
                continue
            # Words said elsewhere in the group count; a word said once says nothing shared.
            score = sum(weight[w] for w in content if weight[w] > 1) / len(words) ** 0.5
            if score > 0:
                scored.append((score, i, k, sentence))
    best = sorted(scored, key=lambda s: (-s[0], s[1], s[2]))[:n]
    return [(i, sentence) for _score, i, _k, sentence in sorted(best, key=lambda s: (s[1], s[2]))]
