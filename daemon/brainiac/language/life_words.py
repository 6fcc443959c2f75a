"""The nouns a life fact names, and the checks every life-fact rule shares.

A rule of `life_facts` or `life_tastes` gives a fact only when it names one of these nouns: a
family word or a pet (`my sister Ines`, `a cat named Bailey`), how many (`three kids`), a job by
its name or its ending (`is_job`: "nurse", "counselor", not "believer"), an instrument, a group
one joins, a business one runs, a place one volunteers at. A fact said under a negation ("I
don't have a dog") is no fact (`unless_negated`).

Only what both rule modules use, or what reads as one list beside the others, is here; the words
of a single rule (what is no taste, a goal's verbs, an identity's adjectives) stay beside it.
"""

from __future__ import annotations

from brainiac.language import lexicon as lex

RELATIVES = lex.word_set(
    """
    sister brother mother mom mum father dad wife husband partner boyfriend girlfriend son
    daughter friend boss manager colleague cousin aunt uncle grandma grandmother grandpa
    grandfather granddaughter grandson niece nephew roommate flatmate neighbour neighbor fiance
    fiancé fiancee fiancée stepson stepdaughter stepmom stepdad coworker co-worker mentor
    """
)
PETS = lex.word_set(
    """
    dog cat puppy pup kitten kitty turtle tortoise rabbit bunny hamster parrot bird horse pony
    goldfish fish snake lizard guinea-pig ferret
    """
) | {"guinea pig"}
PET_PLURALS = frozenset(
    {p + "s" for p in PETS if not p.endswith(("y", "sh"))}
    | {"puppies", "kitties", "bunnies", "ponies", "fish"}
)
KIN_PLURALS = lex.word_set(
    """
    kids children sons daughters brothers sisters siblings grandchildren grandkids cousins
    nieces nephews
    """
)
NUMBERS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20,
}  # fmt: skip
NUMBER = r"(?:\d{1,2}|" + "|".join(NUMBERS) + ")"
# A noun that names a job by its ending ("teacher", "counselor", "artist", "librarian",
# "accountant") or by name; an adjective in front only from this short list.
_JOB_ENDINGS = ("er", "or", "ist", "ian", "ant", "ent")
_JOBS = lex.word_set(
    """
    nurse chef cook doctor vet veterinarian lawyer architect student intern pilot dentist
    paramedic firefighter barista mechanic electrician plumber carpenter coach tutor
    """
)
_NOT_JOBS = lex.word_set(
    """
    believer fighter survivor lover dreamer winner loser keeper worrier member beginner fan
    parent student-athlete talker thinker doer go-getter perfectionist optimist pessimist
    introvert extrovert ambivert fanatic patient client customer resident citizen
    """
)
_JOB_MODIFIERS = lex.word_set(
    """
    assistant senior junior head chief lead retired former freelance professional part-time
    full-time registered licensed certified substitute
    """
)
INSTRUMENTS = lex.word_set(
    """
    piano guitar violin viola cello clarinet flute saxophone sax trumpet trombone drums bass
    ukulele harp banjo harmonica accordion oboe bassoon keyboard keyboards
    """
)
# "I've been trying for weeks": a gerund that is no pastime or work of one's own.
NOT_PASTIMES = lex.word_set(
    """
    trying thinking waiting looking feeling wanting meaning hoping planning struggling going
    doing getting saying talking wondering meaning dealing having being keeping missing
    """
)

# What one joins (and is a member of from then on) and what one runs as one's business.
GROUPS = lex.word_set(
    """
    group club gym church team band choir class program programme course society association
    league union brigade committee council organisation organization network guild chapter
    crew troupe orchestra party congregation synagogue mosque temple
    """
)
BUSINESSES = lex.word_set(
    """
    store shop business company studio restaurant bakery cafe café salon practice firm startup
    agency boutique clinic gallery bar pub
    """
)
# Where one volunteers: "the food bank", "a homeless shelter".
PLACES = lex.word_set(
    """
    shelter bank hospital school library center centre church kitchen clinic home museum zoo
    hospice charity garden park camp
    """
)
# Words that frame a favourite rather than name it: "my favourite part", "this one is my fave".
FRAME = lex.word_set("part thing things one way bit moment time day kind sort ever")


def is_job(role: str) -> bool:
    """Whether `role` names a job: "nurse", "substitute teacher", not "big believer"."""
    words = role.lower().split()
    if len(words) == 2 and words[0] not in _JOB_MODIFIERS:
        return False
    noun = words[-1]
    if noun in _NOT_JOBS or noun in lex.STOP_WORDS:
        return False
    return noun in _JOBS or (len(noun) > 4 and noun.endswith(_JOB_ENDINGS))


def unless_negated(pairs: list[tuple[str, str]], s: str, start: int) -> list[tuple[str, str]]:
    """`pairs`, or none when a negation comes before `start` in `s` ("I don't have a dog")."""
    return [] if lex.negated_before(s, start) else pairs
