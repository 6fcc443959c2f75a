"""Generate a realistic brainiac vault of N long-term notes, deterministically from a seed.

    python benchmarks/generate_vault.py PATH --notes 1000 --seed 1

The vault is the `brainiac init` template plus N notes under memory/long_term/ in the template's
format: YAML frontmatter (title, tags, aliases, strength, reinforcement, created, updated,
last_accessed, status), `## Summary`, `## Facts`, free prose (`## Notes`), `## Sources` with event
lines whose ids come from brainiac.formats.events, and `## Related` with [[links]] to other notes.
The short-term document gets a working-memory line and an Event Log.

Notes are about people, projects, places and topics; their prose mixes a Zipf-distributed English
vocabulary with a generated jargon lexicon (product names, codenames), people, places and dates,
so the index sees a realistic spread of frequent and rare terms. Same seed, same bytes.

Used as a module by benchmarks/scale.py: `generate(path, notes, seed)` and `prompts(seed, n)`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import re
import sys
import time
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path

from brainiac.formats import events as ev
from brainiac.store.vault import LONG_TERM_DIR, SHORT_TERM
from brainiac.store.vault import init as init_vault


def _split(text: str) -> list[str]:
    return text.split()


# ~600 common English words, roughly in frequency order (the order sets the Zipf weights).
_COMMON = _split("""
the of and to in is that for it with as was on be by this are from at or an have not which but they
his all were has one their there been more can if will would about when what so out up into some
time them other then its only new these may also two first any like could our over such work most
after year made many before must through back well much where should just way those people because
each how very still good last long great under between same day three while another right used own
world part last place over small during without again number however life during against never
might later team plan project data report meeting review budget client customer contract deadline
release version feature issue change decision question answer design system process service support
product market sales price cost value risk quality security test build deploy server network
database migration schedule agenda summary update status priority goal result progress problem
solution option proposal request approval feedback training hiring office travel flight hotel
dinner lunch coffee call email message document slide draft note invoice payment account policy
rule standard audit compliance legal finance marketing research engineering operations support
strategy roadmap milestone sprint backlog ticket incident outage alert monitor metric dashboard
analysis model forecast estimate target revenue growth churn retention onboarding launch campaign
partner vendor supplier board investor funding quarter monthly weekly daily morning afternoon
evening weekend holiday vacation birthday anniversary family friend colleague manager director
engineer designer analyst consultant lawyer doctor teacher student child parent brother sister wife
husband neighbour landlord lease apartment house garden kitchen car bike train bus ticket passport
visa insurance tax bank loan mortgage rent salary bonus raise promotion interview offer contract
notice resign retire health exercise running swimming yoga diet sleep appointment dentist pharmacy
medicine allergy recipe bread cheese wine book film music concert museum theatre game match
football tennis chess hiking camping beach mountain river lake forest weather rain snow storm heat
summer winter spring autumn agree decide prefer remember forget mention suggest promise confirm
cancel postpone reschedule move delay finish start continue stop expect hope worry discuss explain
describe compare choose order deliver ship return refund repair replace install upgrade configure
restore backup important urgent optional blocked pending approved rejected complete partial
internal external early late quick slow simple complex cheap expensive private public local remote
shared personal careful formal informal short written verbal annual quarterly recent previous next
final initial
""")

_TOPICS = _split("""
migration pipeline warehouse analytics onboarding hiring relocation renovation wedding garden
kitchen budget taxes insurance mortgage lease retirement vacation conference workshop newsletter
podcast website redesign rebranding audit compliance security incident outage backup infrastructure
kubernetes billing invoicing payroll procurement forecasting reporting dashboard chatbot search
recommendation translation localisation accessibility performance testing documentation training
mentoring fundraising volunteering marathon cooking photography woodworking gardening birdwatching
astronomy chess piano violin pottery sailing climbing
""")

_FIRST = _split("""
Anna Ben Clara David Elena Felix Greta Hugo Ines Jonas Katrin Lukas Maria Nils Olga Paul Quinn Rosa
Stefan Tara Ulrich Vera Walter Xenia Yusuf Zoe Amir Beatriz Chen Dmitri Esther Farid Giulia Hana
Ivan Jana Kenji Leila Mateo Nadia Omar Priya Rafael Sofia Tomas Uma Viktor Wen Yara Aiko Bruno
Carmen Diego Emma Fatima Gabriel Helga Igor Julia Karl Lena Marco Nora Oskar Pia Rania Samuel Tessa
Umar Valentina Wilhelm Ximena Yosef Zara Arjun Birgit Cyrus Daria Emil Freya
""")

_LAST = _split("""
Berg Novak Schmidt Rossi Garcia Kowalski Nielsen Dubois Moreau Costa Silva Jensen Larsen Weber
Fischer Meyer Wagner Becker Hoffmann Keller Lang Fuchs Vogel Brandt Hartmann Kraus Richter Wolf
Lehmann Koch Bauer Huber Mayer Sato Tanaka Ito Kim Park Lee Chen Wang Singh Patel Khan Ali Haddad
Nasser Okafor Mensah Adeyemi Kariuki Lindqvist Eriksson Virtanen Korhonen Horvat Petrov Ivanova
Popescu Nagy Szabo Dvorak Kaya Demir Yilmaz Cohen Levi Mizrahi Ortega Ramos Vargas Torres Flores
""")

_PLACES = _split("""
Lisbon Porto Madrid Barcelona Valencia Lyon Paris Marseille Brussels Antwerp Amsterdam Rotterdam
Hamburg Berlin Munich Leipzig Dresden Vienna Zurich Geneva Basel Milan Turin Bologna Florence Rome
Naples Athens Sofia Bucharest Budapest Prague Brno Krakow Warsaw Gdansk Vilnius Riga Tallinn
Helsinki Stockholm Gothenburg Oslo Bergen Copenhagen Aarhus Dublin Cork Edinburgh Glasgow
Manchester Leeds Bristol London Reykjavik Istanbul Ankara Cairo Nairobi Lagos Accra Tunis
Casablanca Toronto Montreal Boston Chicago Denver Seattle Austin Lima Bogota Santiago Tokyo Osaka
Seoul Taipei
""")

_SESSIONS = (
    "planning",
    "weekly",
    "standup",
    "retro",
    "one-on-one",
    "chat",
    "email",
    "call",
    "review",
    "kickoff",
    "support",
    "evening",
    "trip",
    "family",
)
_FACT_KEYS = (
    "status",
    "owner",
    "deadline",
    "budget",
    "location",
    "contact",
    "next step",
    "decision",
    "risk",
    "prefers",
    "role",
    "phone",
    "birthday",
    "started",
    "priority",
)
_SYLLABLES = _split("""
ka ro ven ti la mor dex sil an tor bri qua nel zo fen gar lum pra sto vik ru mel dar cor ix ol ys
tem nor bel hal kin sar vo ul pex tra gon mi
""")

_EPOCH = dt.datetime(2025, 1, 6, 8, 0)
_SPAN_DAYS = 700


@dataclass(frozen=True)
class Lexicon:
    """The vocabulary of one seed: common words (Zipf-weighted) plus a generated jargon list."""

    words: list[str]
    cum_weights: list[float]
    jargon: list[str]

    def sample(self, rng: random.Random, k: int) -> list[str]:
        return rng.choices(self.words, cum_weights=self.cum_weights, k=k)


def lexicon(seed: int, jargon_size: int = 20000) -> Lexicon:
    rng = random.Random(f"lexicon-{seed}")
    jargon: dict[str, None] = {}
    while len(jargon) < jargon_size:
        word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))
        if len(word) >= 5:
            jargon.setdefault(word, None)
    common = list(dict.fromkeys(_COMMON))
    words = common + _TOPICS + list(jargon)
    # Zipf over the whole list: the common words are the head, the jargon the long tail (scaled
    # down so that roughly one word in eight is jargon, as in notes full of names and codenames).
    head = len(common) + len(_TOPICS)
    weights = [(1.0 if rank < head else 0.2) / (rank + 8) ** 1.05 for rank in range(len(words))]
    return Lexicon(words, list(accumulate(weights)), list(jargon))


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def _when(rng: random.Random) -> dt.datetime:
    return _EPOCH + dt.timedelta(days=rng.randrange(_SPAN_DAYS), minutes=rng.randrange(600))


def _titles(rng: random.Random, n: int, lex: Lexicon) -> list[tuple[str, str]]:
    """(title, kind) for n distinct notes."""
    out: list[tuple[str, str]] = []
    seen: set[str] = set()  # slugs, so that two titles never share a file name
    while len(out) < n:
        kind = rng.choices(("person", "project", "place", "topic"), weights=(4, 3, 1, 2))[0]
        if kind == "person":
            title = f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"
        elif kind == "project":
            title = f"Project {rng.choice(lex.jargon).capitalize()}"
        elif kind == "place":
            title = f"{rng.choice(_PLACES)} {rng.choice(('office', 'trip', 'flat', 'team'))}"
        else:
            title = f"{rng.choice(_TOPICS).capitalize()} {rng.choice(lex.jargon)}"
        if _slug(title) in seen:
            title = f"{title} {len(out)}"
        if _slug(title) in seen:
            continue
        seen.add(_slug(title))
        out.append((title, kind))
    return out


def _sentence(rng: random.Random, lex: Lexicon, titles: list[tuple[str, str]]) -> str:
    words = lex.sample(rng, rng.randint(7, 18))
    roll = rng.random()
    pos = rng.randrange(len(words))
    if roll < 0.25:
        words.insert(pos, f"{rng.choice(_FIRST)} {rng.choice(_LAST)}")
    elif roll < 0.4:
        words.insert(pos, rng.choice(_PLACES))
    elif roll < 0.5:
        words.insert(pos, _when(rng).date().isoformat())
    elif roll < 0.55:
        words.insert(pos, f"[[{rng.choice(titles)[0]}]]")
    text = " ".join(words)
    return text[0].upper() + text[1:] + rng.choice((".", ".", ".", "?", "!"))


def _paragraph(rng: random.Random, lex: Lexicon, titles: list[tuple[str, str]], k: int) -> str:
    return " ".join(_sentence(rng, lex, titles) for _ in range(k))


def note_text(i: int, titles: list[tuple[str, str]], lex: Lexicon, seed: int) -> str:
    rng = random.Random(f"note-{seed}-{i}")
    title, kind = titles[i]
    created = _when(rng)
    updated = created + dt.timedelta(days=rng.randrange(120))
    accessed = updated + dt.timedelta(days=rng.randrange(60))
    tags = [kind, *rng.sample(_TOPICS, rng.randint(1, 3))]
    aliases = [title.split()[0]] if kind == "person" else [title.split()[-1]]
    fm = [
        "---",
        f"title: {title}",
        f"tags: [{', '.join(tags)}]",
        f"aliases: [{', '.join(aliases)}]",
        f"strength: {rng.uniform(0.3, 3.0):.2f}",
        f"reinforcement: {rng.uniform(-0.5, 1.0):.2f}",
        f"created: {created.date().isoformat()}",
        f"updated: {updated.date().isoformat()}",
        f"last_accessed: {accessed.date().isoformat()}",
        f"status: {rng.choices(('active', 'dormant', 'archived'), weights=(8, 2, 1))[0]}",
        "---",
    ]
    summary = _paragraph(rng, lex, titles, rng.randint(2, 4))
    facts = []
    for key in rng.sample(_FACT_KEYS, rng.randint(2, 5)):
        value = " ".join(lex.sample(rng, rng.randint(2, 6)))
        facts.append(f"- {key}: {value}")
        if rng.random() < 0.2:
            facts.append(
                f"  - superseded: {' '.join(lex.sample(rng, 3))} "
                f"({created.date().isoformat()} to {updated.date().isoformat()})"
            )
    # 200-800 words in all: the prose section carries most of them.
    target = rng.randint(200, 800)
    paragraphs = []
    words = len(summary.split()) + 40
    while words < target:
        p = _paragraph(rng, lex, titles, rng.randint(3, 7))
        paragraphs.append(p)
        words += len(p.split())
    sources = []
    for _ in range(rng.randint(2, 5)):
        at = created + dt.timedelta(days=rng.randrange(90), minutes=rng.randrange(1440))
        event = ev.make_event(
            _paragraph(rng, lex, titles, rng.randint(1, 2)),
            role=rng.choice(("user", "user", "assistant")),
            session=rng.choice(_SESSIONS),
            at=at,
        )
        sources.append(ev.render(event).rstrip("\n"))
    sources.sort()
    related = sorted({rng.randrange(len(titles)) for _ in range(rng.randint(2, 5))} - {i})
    parts = [
        "\n".join(fm),
        "## Summary\n" + summary,
        "## Facts\n" + "\n".join(facts),
        "## Notes\n" + "\n\n".join(paragraphs),
        "## Sources\n" + "\n".join(sources),
        "## Related\n" + "\n".join(f"- [[{titles[j][0]}]]" for j in related),
    ]
    return "\n\n".join(parts).replace("---\n\n## Summary", "---\n## Summary") + "\n"


def short_term_text(
    template: str, lex: Lexicon, titles: list[tuple[str, str]], seed: int, n_events: int = 40
) -> str:
    rng = random.Random(f"stm-{seed}")
    working = f"Current topic: {titles[0][0]}; preparing the {rng.choice(_TOPICS)} review."
    text = template.replace("## Working Memory\n", "## Working Memory\n" + working + "\n", 1)
    start = _EPOCH + dt.timedelta(days=_SPAN_DAYS)
    lines = []
    for k in range(n_events):
        event = ev.make_event(
            _paragraph(rng, lex, titles, rng.randint(1, 2)),
            role=rng.choice(("user", "assistant")),
            session=rng.choice(_SESSIONS),
            at=start + dt.timedelta(minutes=7 * k),
        )
        lines.append(ev.render(event))
    return text.rstrip("\n") + "\n" + "".join(lines)


def generate(path: Path | str, notes: int, seed: int = 1) -> dict[str, float]:
    """Create the vault at `path` (template + `notes` notes). Returns counts and word totals."""
    root = Path(path)
    init_vault(root)
    lex = lexicon(seed)
    rng = random.Random(f"titles-{seed}")
    titles = _titles(rng, notes, lex)
    out_dir = root / LONG_TERM_DIR
    out_dir.mkdir(parents=True, exist_ok=True)
    total_words = 0
    used: set[str] = {p.name for p in out_dir.glob("*.md")}
    for i in range(notes):
        text = note_text(i, titles, lex, seed)
        total_words += len(text.split())
        name = f"{_slug(titles[i][0])}.md"
        if name in used:
            name = f"{_slug(titles[i][0])}-{i}.md"
        used.add(name)
        (out_dir / name).write_text(text, encoding="utf-8")
    stm_path = root / SHORT_TERM
    stm_path.write_text(
        short_term_text(stm_path.read_text(encoding="utf-8"), lex, titles, seed), encoding="utf-8"
    )
    return {"notes": notes, "words": total_words, "words_per_note": total_words / max(notes, 1)}


def prompts(seed: int, n: int, notes: int) -> list[str]:
    """n varied prompts drawn from the vault's vocabulary: people, projects, places, topics."""
    lex = lexicon(seed)
    titles = _titles(random.Random(f"titles-{seed}"), notes, lex)
    rng = random.Random(f"prompts-{seed}")
    templates = (
        "What did {t} say about the {w1} {w2}?",
        "When is the {w1} for {t} due?",
        "Remind me what we decided about {w1} and {w2} in {p}.",
        "{w1} {w2} {w3}",
        "Who owns the {w1} {w2} and what is the status of {t}?",
        "Summarise everything about {t}.",
        "Any {w1} {w2} news from {p} or {t}?",
        "How did the {w1} with {f} go last week?",
    )
    out = []
    for _ in range(n):
        w1, w2, w3 = [w for w in lex.sample(rng, 40) if len(w) > 4][:3]  # content words
        out.append(
            rng.choice(templates).format(
                t=rng.choice(titles)[0],
                p=rng.choice(_PLACES),
                f=rng.choice(_FIRST),
                w1=w1,
                w2=w2,
                w3=w3,
            )
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "path", type=Path, help="the vault folder to create (must not exist or be empty)"
    )
    ap.add_argument("--notes", type=int, default=1000, help="number of long-term notes")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    if args.path.exists() and any(args.path.iterdir()):
        print(f"{args.path}: exists and is not empty", file=sys.stderr)
        return 2
    started = time.perf_counter()
    info = generate(args.path, args.notes, args.seed)
    print(
        f"{args.path}: {info['notes']} notes, {info['words']} words "
        f"({info['words_per_note']:.0f} per note) in {time.perf_counter() - started:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
