"""The vault opens cleanly in Obsidian (issue 7): after a simulated month of conversations and
daily job runs, every [[link]] resolves by Obsidian's rule, properties have Obsidian's types,
generated files say so, and nothing under `.obsidian/` is touched.

Real vault, real index, `now` passed in (no test sleeps).
"""

from __future__ import annotations

import datetime as dt
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
import yaml

from brainiac import Memory
from brainiac.formats import events as ev
from brainiac.lifecycle.jobs import consolidate
from brainiac.store import names, working_memory
from brainiac.store.vault import ARCHIVE_DIR, INDEXES_DIR, LONG_TERM_DIR, WORKING_MEMORY, Vault

START = dt.datetime(2026, 12, 1, 8, 0)
DAYS = 30

_LINK_RE = re.compile(r"!?\[\[([^\[\]\n]+?)\]\]")
_DATE_TIME_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$")

# Obsidian's property types, one per property name across a vault.
_DATES = ("created", "updated", "archived")
_DATE_TIMES = ("last_accessed", "decayed", "reinforced", "written")
_NUMBERS = ("strength", "reinforcement")
_LISTS = ("tags", "aliases")
_TEXTS = ("title", "status", "redirect")
_CHECKBOXES = ("generated", "private")


# -- Obsidian's rules, written out for the test -------------------------------------------------


def markdown_files(vault: Path) -> list[Path]:
    """Every Markdown file Obsidian shows: dot-folders (.obsidian, .brainiac, .trash) are not."""
    return sorted(
        p
        for p in vault.rglob("*.md")
        if not any(part.startswith(".") for part in p.relative_to(vault).parts)
    )


def resolver(vault: Path) -> tuple[dict[str, list[str]], set[str]]:
    """File names without `.md` (lowercase) -> the files with that name; and vault paths."""
    by_name: dict[str, list[str]] = defaultdict(list)
    paths: set[str] = set()
    for path in markdown_files(vault):
        rel = path.relative_to(vault).as_posix()
        by_name[path.stem.lower()].append(rel)
        paths.update({rel.lower(), rel[:-3].lower()})
    return by_name, paths


def unresolved(vault: Path) -> list[tuple[str, str]]:
    """(file, link) for every [[link]] Obsidian would not resolve to exactly one file.

    Obsidian resolves [[target]], [[target|shown]], [[target#Heading]] and [[target#^block]] by
    the target: a file's name without `.md` (ignoring case; unique in the vault) or a vault path.
    It never resolves a link through a note's `title` or `aliases`.
    """
    by_name, paths = resolver(vault)
    bad = []
    for path in markdown_files(vault):
        rel = path.relative_to(vault).as_posix()
        for link in _LINK_RE.findall(path.read_text(encoding="utf-8")):
            target = link.split("|", 1)[0].split("#", 1)[0].rstrip("\\").strip().lower()
            if not target:
                continue  # [[#Heading]]: a heading of the same note
            if target in paths or len(by_name.get(target, [])) == 1:
                continue
            bad.append((rel, link))
    return bad


def frontmatter(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    if not text.startswith("---\n"):
        return {}
    loaded = yaml.safe_load(text.split("\n---\n", 1)[0][4:])
    return loaded if isinstance(loaded, dict) else {}


def property_problems(vault: Path) -> list[str]:
    """Properties brainiac writes whose YAML is not the shape of their Obsidian type."""
    bad = []
    for path in markdown_files(vault):
        rel = path.relative_to(vault).as_posix()
        for key, value in frontmatter(path).items():
            if key in _DATES:
                # YAML reads YYYY-MM-DD as a date; a datetime or a string is another shape.
                ok = isinstance(value, dt.date) and not isinstance(value, dt.datetime)
            elif key in _DATE_TIMES:
                # YYYY-MM-DDTHH:MM: PyYAML leaves it a string (its timestamps need seconds).
                ok = isinstance(value, str) and bool(_DATE_TIME_RE.match(value))
            elif key in _NUMBERS:
                ok = isinstance(value, int | float) and not isinstance(value, bool)
            elif key in _LISTS:
                ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
            elif key in _TEXTS:
                ok = isinstance(value, str)
            elif key in _CHECKBOXES:
                ok = isinstance(value, bool)
            else:
                ok = False  # a property nobody expected: say so, so this list stays complete
            if not ok:
                bad.append(f"{rel}: {key}: {value!r}")
    return bad


# -- the simulated month -------------------------------------------------------------------------


def _day_events(day: int) -> list[tuple[str, str, str]]:
    """(role, session, text) for one day: people, projects, facts and small talk."""
    project = "Atlas migration" if day < 14 else "Beacon launch"  # the focus moves mid-month
    out: list[tuple[str, str, str]] = [
        ("user", f"standup-{day}", f"{project} status: batch {day} is done."),
        ("assistant", f"standup-{day}", f"Noted, batch {day} of the {project} is done."),
        ("user", f"chat-{day}", "ok thanks!"),
    ]
    if day < 7:
        # Talked about in the first week only: these notes fade and move to the archive. Lena
        # Vogel, like Marco below, is said in three events of a session: a name founds its own
        # note only then (plan.MIN_EVENTS_FOR_NEW_ENTITY), and the checks need both notes.
        out += [
            ("user", f"call-{day}", "Anna wants the report as a short written update."),
            ("user", f"garden-{day}", f"Lena Vogel brought tulip bulbs, set {day}."),
            ("user", f"garden-{day}", "Lena Vogel says the tulips go in before the frost."),
            ("user", f"garden-{day}", "Lena Vogel will plant the bulbs by the fence."),
        ]
    if day % 7 == 1:
        out += [
            ("user", f"dinner-{day}", "Dinner with Marco on Saturday at his place."),
            ("user", f"dinner-{day}", "Marco is vegetarian, so no fish."),
            ("user", f"dinner-{day}", "Marco asked us to bring bread."),
        ]
    if day % 2 == 0:
        out += [
            ("user", f"beacon-{day}", f"We reviewed the Beacon launch plan, part {day}."),
            ("assistant", f"beacon-{day}", "The Beacon budget review is on Friday."),
        ]
    if day == 12:
        out += [
            ("user", "moves", "I moved to Leipzig last week."),
            ("user", "beacon-12", "The Beacon deadline is Friday 2026-12-18."),
        ]
    if day == 20:
        out.append(("user", "beacon-20", "The Beacon deadline moved to Monday 2026-12-21."))
    if day % 5 == 0:
        out.append(("assistant", f"chat-{day}", "haha yes"))
    return out


def _other_devices_note(vault: Path, at: dt.datetime) -> None:
    """A second note about Marco that another device's promotion wrote (only brainiac's lines),
    so organization merges it and leaves a redirect stub."""
    event = ev.make_event("Marco prefers calls in the morning.", session="laptop", at=at)
    text = consolidate.new_note_text("Marco", ["entity"], at)
    text = text.replace("## Sources\n", "## Sources\n" + ev.render(event))
    (vault / LONG_TERM_DIR / "Marco (from laptop).md").write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def simulated_month(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One month in one vault, shared by the tests below (they only read it)."""
    root = tmp_path_factory.mktemp("obsidian")
    vault = root / "vault"
    mp = pytest.MonkeyPatch()
    for var in ("XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR"):
        (root / var).mkdir(mode=0o700)
        mp.setenv(var, str(root / var))
    try:
        Memory.init(vault)
        # Much faster forgetting than the default 0.98, so what the first week was about fades
        # to the archive within the month.
        (vault / ".brainiac/config.toml").write_text("[lifecycle]\ndecay_per_day = 0.8\n")
        obsidian = vault / ".obsidian"
        obsidian.mkdir()
        (obsidian / "app.json").write_text(
            '{\n  "newLinkFormat": "shortest",\n  "useMarkdownLinks": false,\n'
            '  "alwaysUpdateLinks": true\n}'
        )
        (obsidian / "workspace.json").write_text('{"main": {"id": "a1b2c3", "type": "split"}}\n')
        before = _tree(obsidian)
        # A person's own note named Marco outside memory/: a new entity note about Marco must get
        # another file name, and links to it must name that file, not the title.
        (vault / "people").mkdir()
        (vault / "people/Marco.md").write_text(
            "---\ntags: [person]\n---\nMarco from the climbing gym, not the one at work.\n"
        )
        reports = []
        wm_links: list[tuple[int, str]] = []
        with Memory(vault) as memory:
            for day in range(DAYS):
                today = START + dt.timedelta(days=day)
                for i, (role, session, text) in enumerate(_day_events(day)):
                    at = today + dt.timedelta(minutes=9 * i)
                    memory.remember(text, role=role, session=session, at=at, now=at)
                if day == 15:
                    _other_devices_note(vault, today)
                end_of_day = today + dt.timedelta(hours=12)
                reports += memory.run_job("all", now=end_of_day)
                if day == 10:
                    # An agent asks, and says the answer helped: `reinforced` is set.
                    memory.context("When is the Beacon deadline?", now=end_of_day)
                    memory.feedback(+1, now=end_of_day)
                if day == 20:
                    # A person types into the generated file: kept aside, never lost.
                    wm = vault / WORKING_MEMORY
                    wm.write_text(wm.read_text() + "my own line\n")
                # What the daemon does after every change: the working memory, written whole.
                context = memory.context(now=end_of_day)
                working_memory.write(memory.vault, memory.locations.state, context.text, end_of_day)
                # It changes every day: its links must resolve every day, not only at the end.
                wm_links += [(day, link) for f, link in unresolved(vault) if f == WORKING_MEMORY]
        return {
            "vault": vault,
            "obsidian_before": before,
            "reports": reports,
            "working_memory_links": wm_links,
        }
    finally:
        mp.undo()


# -- the checks ----------------------------------------------------------------------------------


def test_the_month_ran_and_did_what_links_must_survive(simulated_month: dict[str, Any]) -> None:
    vault: Path = simulated_month["vault"]
    reports = simulated_month["reports"]
    assert all(r.ok for r in reports), [r.summary for r in reports if not r.ok]
    archived = {p.name for p in (vault / ARCHIVE_DIR / "notes").glob("*.md")}
    assert "anna-berg.md" in archived, archived  # a template note, its title not its file name
    assert any("lena" in n.lower() for n in archived), archived
    stub = (vault / LONG_TERM_DIR / "Marco (from laptop).md").read_text()
    assert "status: merged" in stub and 'redirect: "[[Marco (2)|Marco]]"' in stub
    # The entity note could not be named Marco.md (the person's note is), so links show its title.
    assert (vault / LONG_TERM_DIR / "Marco (2).md").exists()
    everything = "\n".join(p.read_text() for p in markdown_files(vault))
    assert "[[Marco (2)|Marco]]" in everything
    assert "[[anna-berg|Anna Berg]]" in everything
    assert "[[project-atlas|Project Atlas]]" in everything


def test_every_link_resolves_by_obsidians_rule(simulated_month: dict[str, Any]) -> None:
    vault: Path = simulated_month["vault"]
    assert unresolved(vault) == []
    assert simulated_month["working_memory_links"] == []


def test_properties_have_obsidians_types(simulated_month: dict[str, Any]) -> None:
    vault: Path = simulated_month["vault"]
    assert property_problems(vault) == []
    seen = {k for p in markdown_files(vault) for k in frontmatter(p)}
    expected = {"strength", "decayed", "reinforced", "archived", "last_accessed", "redirect"}
    assert expected | {"generated", "written"} <= seen


def test_generated_files_say_so(simulated_month: dict[str, Any]) -> None:
    vault: Path = simulated_month["vault"]
    generated = [vault / WORKING_MEMORY] + [
        vault / INDEXES_DIR / f"{name}.md" for name in ("Topics", "Entities", "Timeline")
    ]
    for path in generated:
        assert frontmatter(path).get("generated") is True, path
        body = path.read_text().split("\n---\n", 1)[1]
        callout, explanation = body.split("\n")[:2]
        assert callout == "> [!info] Generated by brainiac", path
        assert explanation.startswith("> ") and "instead" in explanation, path
    # The person's edit of the working memory was kept aside as they wrote it (it still carries
    # the property and callout they edited around: their bytes are not brainiac's to change).
    [aside] = (vault / "context").glob("working_memory.edited-*.md")
    assert aside.read_text().endswith("my own line\n")
    # Nothing else claims to be generated: a person's note never is.
    claimed = {p for p in markdown_files(vault) if frontmatter(p).get("generated") is True}
    assert claimed == set(generated) | {aside}


def test_nothing_under_dot_obsidian_is_touched(simulated_month: dict[str, Any]) -> None:
    obsidian: Path = simulated_month["vault"] / ".obsidian"
    assert _tree(obsidian) == simulated_month["obsidian_before"]


def _tree(folder: Path) -> dict[str, bytes | None]:
    """Every path below `folder` with its bytes (None for a folder): byte-identical, none new."""
    return {
        p.relative_to(folder).as_posix(): None if p.is_dir() else p.read_bytes()
        for p in folder.rglob("*")
    }


# -- the rules on their own ----------------------------------------------------------------------


def test_a_link_names_the_file_and_shows_the_title_when_they_differ() -> None:
    assert names.link("memory/long_term/Marco.md", "Marco") == "[[Marco]]"
    assert names.link("memory/long_term/anna-berg.md", "Anna Berg") == "[[anna-berg|Anna Berg]]"
    # A title cannot end the link early or add a second alias.
    assert names.link("memory/long_term/x.md", "A [b] | c") == "[[x|A (b) - c]]"


def test_a_new_note_never_takes_a_file_name_used_anywhere_in_the_vault(vault: Path) -> None:
    (vault / "journal").mkdir()
    (vault / "journal/Lena.md").write_text("my own note\n")
    taken = names.markdown_names(Vault.open(vault))
    assert "lena.md" in taken and "anna-berg.md" in taken
    assert names.filename_for("Lena", taken) == "Lena (2).md"


def test_links_by_title_and_by_file_name_count_as_the_same_link() -> None:
    text = (
        "---\ntitle: Project Atlas\n---\n## Summary\nWith [[Anna Berg]].\n\n## Related\n"
        "- [[beacon|Project Beacon]]\n"
    )
    assert consolidate.add_related(text, ["[[anna-berg|Anna Berg]]", "[[Beacon]]"]) == text
    added = consolidate.add_related(text, ["[[lena-vogel|Lena Vogel]]", "Old Title"])
    assert "- [[lena-vogel|Lena Vogel]] ^g-" in added
    assert "- [[Old Title]] ^g-" in added  # a bare title from a plan saved by an older version
