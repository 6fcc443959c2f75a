"""One memory for every project (docs/projects.md): events carry a project, recall is scoped to
the project asked from, the person's preferences reach every project, an old vault reads as it
did, and `forget --project` removes one project."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from whoosh.query import Term
from whoosh.reading import SegmentReader

from brainiac import Memory
from brainiac.formats import events as ev
from brainiac.language import facts as facts_mod
from brainiac.lifecycle.jobs.reflection import stm_body
from brainiac.search import project_search
from brainiac.store import config as config_mod
from brainiac.store import projects
from brainiac.store.vault import SHORT_TERM
from conftest import run_cli

NOW = dt.datetime(2026, 11, 24, 12, 0)
# Two projects that talk about the same things in the same words.
ALPHA = [
    "The deploy script for the service copies the build to the staging server with rsync.",
    "The database migration for the service runs before the deploy script, with alembic.",
    "Tests for the service run on pytest with the coverage report in CI.",
]
BETA = [
    "The deploy script for the service pushes a docker image to the staging server.",
    "The database migration for the service runs after the deploy script, with flyway.",
    "Tests for the service run on jest with the coverage report in CI.",
]
# Enough later events of neither project that the facts above are long-term memory, found by
# search, not shown as the recent window.
FILLER = [f"Lunch break number {i} at the usual place." for i in range(12)]


def _configure(vault: Path, key: str, value: str) -> None:
    """Set `[projects] key` where the template documents it (`# key = default`)."""
    path = vault / ".brainiac" / "config.toml"
    text, n = re.subn(
        rf"^# {key} = .*$",
        f"{key} = {value}",
        path.read_text(encoding="utf-8"),
        count=1,
        flags=re.M,
    )
    assert n == 1
    path.write_text(text, encoding="utf-8")


def _fill(vault: Path) -> None:
    with Memory(vault, refresh_interval_s=0) as m:
        at = NOW - dt.timedelta(days=2)
        for i, (a, b) in enumerate(zip(ALPHA, BETA, strict=True)):
            m.remember(a, at=at + dt.timedelta(minutes=2 * i), project="alpha", now=NOW)
            m.remember(b, at=at + dt.timedelta(minutes=2 * i + 1), project="beta", now=NOW)
        for i, text in enumerate(FILLER):
            m.remember(text, at=NOW - dt.timedelta(hours=12 - i), now=NOW)


def test_an_event_line_shows_its_project_and_keeps_the_id_it_had_without_one() -> None:
    at = dt.datetime(2026, 11, 20, 9, 12)
    plain = ev.make_event("Atlas ships on Friday.", session="planning", at=at)
    scoped = ev.make_event("Atlas ships on Friday.", session="planning", at=at, project="atlas")
    line = ev.render(scoped)
    assert line.startswith("- 2026-11-20T09:12:00 **user** (planning) [atlas]: Atlas ships")
    assert scoped.id == plain.id  # the project labels an event; it is no part of its id
    assert ev.parse_text(line) == [scoped]
    assert ev.parse_text(ev.render(plain))[0].project is None
    # A folder name becomes a name a line can hold.
    assert ev.clean_project(" My App (v2) ") == "My-App-v2"
    assert ev.clean_project("[]") is None


def test_an_old_vault_reads_unchanged_with_the_same_ids(vault: Path) -> None:
    old = (
        "- 2026-11-20T09:12:00 **user** (planning): The deadline moved to Monday. ^e-3f2a1c9b0d\n"
        "- 2026-11-20T09:13:00 **assistant**: Noted [the deadline]: Monday.\n"
        "- called Anna about the lease\n"
    )
    events = ev.parse_text(old)
    assert [e.project for e in events] == [None, None, None]
    assert events[0].id == "e-3f2a1c9b0d"
    # Ids derived as before projects existed (time, role, session, text).
    assert events[1].id == ev.event_id(events[1].at, "assistant", None, events[1].text)
    assert events[1].text == "Noted [the deadline]: Monday."
    assert "".join(ev.render(e) for e in events[:2]) == (
        old.splitlines(keepends=True)[0] + old.splitlines()[1] + f" ^{events[1].id}\n"
    )
    # Such a vault is global memory: found from any project, unscoped or not.
    path = vault / SHORT_TERM
    path.write_text(path.read_text(encoding="utf-8").rstrip("\n") + "\n\n" + old)
    with Memory(vault, refresh_interval_s=0) as m:
        for project in (None, "alpha"):
            hits = m.search("the deadline moved", project=project)
            # the two old events first (the reply is indexed with the message it answers)
            assert {h.event_id for h in hits[:2]} == {"e-3f2a1c9b0d", events[1].id}
            assert all(h.projects == () for h in hits)


def test_each_project_gets_its_own_facts_first_and_the_global_ones(vault: Path) -> None:
    _fill(vault)
    with Memory(vault, refresh_interval_s=0) as m:
        for own, other in (("alpha", "beta"), ("beta", "alpha")):
            found = m.search("how does the deploy script work", project=own)
            assert found[0].projects == (own,)
            # another project's memory shares the words, but is not clearly more relevant
            assert all(other not in r.projects for r in found)
            text = m.context(
                "How does the deploy script work?", budget=2000, now=NOW, project=own
            ).text
            mine = ALPHA if own == "alpha" else BETA
            theirs = BETA if own == "alpha" else ALPHA
            assert mine[0] in text and theirs[0] not in text
            assert "Lunch break" in text  # global memory is in every project
        # Unscoped, as before: both.
        text = m.context("How does the deploy script work?", budget=2000, now=NOW).text
        assert ALPHA[0] in text and BETA[0] in text


def test_another_project_comes_in_only_when_clearly_relevant_and_never_isolated(
    vault: Path,
) -> None:
    _fill(vault)
    with Memory(vault, refresh_interval_s=0) as m:
        m.remember("Flyway checksums broke after the rename.", project="beta", now=NOW)
        # Nothing of alpha's or global memory is about flyway: beta's is clearly relevant.
        found = m.search("flyway checksums", project="alpha")
        assert found and "beta" in found[0].projects
        # A prompt that names the other project brings its memories too.
        named = m.search("the beta deploy script", project="alpha")
        assert any("beta" in r.projects for r in named)
        assert named[0].projects == ("alpha",)  # ranked after alpha's own
    _configure(vault, "isolate", "true")
    with Memory(vault, refresh_interval_s=0) as m:
        assert m.config.projects_isolate
        for prompt in ("flyway checksums", "the beta deploy script", "jest coverage"):
            found = m.search(prompt, project="alpha", limit=50)
            assert all("beta" not in r.projects for r in found), prompt
            text = m.context(prompt, budget=4000, now=NOW, project="alpha").text
            text = text.split("## User Prompt")[0]
            assert "flyway" not in text.lower() and "docker" not in text and "jest" not in text


def test_a_preference_stated_in_one_project_reaches_both(vault: Path) -> None:
    _fill(vault)
    _configure(vault, "isolate", "true")
    with Memory(vault, refresh_interval_s=0) as m:
        m.remember("I prefer tabs over spaces in every file.", project="alpha", now=NOW)
        for i in range(12):  # out of the recent window: found by search
            m.remember(f"Coffee number {i}.", project="alpha", now=NOW)
        for project in ("alpha", "beta"):
            text = m.context("tabs or spaces?", budget=1000, now=NOW, project=project).text
            # (in alpha found by search; in beta among its recent window, which it is in scope of)
            assert "I prefer tabs over spaces" in text.split("## User Prompt")[0], project
        found = m.search("tabs spaces", project="beta")
        assert found[0].projects == ("alpha",) and found[0].about_person
        # Not every line said in a project is the person's: the assistant's is the project's.
        m.remember("I prefer the staging server for this.", role="assistant", project="alpha")
        assert all(
            "staging server for this" not in r.excerpt
            for r in m.search("prefer staging server", project="beta")
        )


def test_the_hook_maps_cwd_to_a_project_by_git_root_or_the_table(
    vault: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "code" / "Atlas App"
    (repo / ".git").mkdir(parents=True)
    (repo / "src" / "deep").mkdir(parents=True)
    site = tmp_path / "work" / "site"
    (site / "docs").mkdir(parents=True)
    _configure(vault, "paths", f'{{ "{site}" = "website" }}')
    cfg = config_mod.load(vault, environ={})
    assert projects.for_directory(repo / "src" / "deep", cfg) == "Atlas-App"
    assert projects.for_directory(site / "docs", cfg) == "website"
    assert projects.for_directory(tmp_path, cfg) is None
    run_cli(
        "--vault",
        str(vault),
        "remember",
        "The release train leaves on Tuesday.",
        "--project",
        "Atlas-App",
        # Each project's own session, as a session in each folder would be: in one session the
        # website's message would be indexed with the Atlas one before it as its context, and
        # match the prompt twice (corpus.previous_messages).
        "--session",
        "atlas",
        check=True,
    )
    run_cli(
        "--vault",
        str(vault),
        "remember",
        "The release notes go on the blog on Friday.",
        "--project",
        "website",
        "--session",
        "site",
        check=True,
    )
    for cwd, own, other in ((repo / "src", "Tuesday", "Friday"), (site, "Friday", "Tuesday")):
        payload = {
            "session_id": "s1",
            "transcript_path": "",
            "cwd": str(cwd),
            "hook_event_name": "UserPromptSubmit",
            "prompt": "When is the release?",
        }
        done = run_cli(
            "--vault",
            str(vault),
            "hook",
            "user-prompt-submit",
            input=json.dumps(payload),
            check=True,
        )
        assert own in done.stdout and other not in done.stdout
    # The transcript a session in the repository leaves belongs to its project.
    transcript = tmp_path / "session.jsonl"
    line = {
        "type": "user",
        "sessionId": "s2",
        "uuid": "u1",
        "timestamp": "2026-11-24T09:00:00Z",
        "message": {"role": "user", "content": "Pin the numpy version in the lock file."},
    }
    transcript.write_text(json.dumps(line) + "\n")
    stop = {
        "session_id": "s2",
        "transcript_path": str(transcript),
        "cwd": str(repo),
        "hook_event_name": "Stop",
    }
    run_cli("--vault", str(vault), "hook", "stop", input=json.dumps(stop), check=True)
    # (older than the log's events: the import files it where it belongs in time)
    kept = "".join(p.read_text(encoding="utf-8") for p in (vault / "memory").rglob("*.md"))
    assert "[Atlas-App]: Pin the numpy version" in kept


def test_status_and_search_json_show_projects(vault: Path) -> None:
    _fill(vault)
    status = json.loads(run_cli("--vault", str(vault), "status", "--json", check=True).stdout)
    assert status["projects"]["alpha"] == 3 and status["projects"]["beta"] == 3
    assert status["projects"]["(global)"] >= len(FILLER)
    text = run_cli("--vault", str(vault), "status", check=True).stdout
    assert "projects: (global) " in text and "alpha 3, beta 3" in text
    hits = json.loads(
        run_cli("--vault", str(vault), "search", "deploy script", "--json", check=True).stdout
    )
    assert {tuple(h["projects"]) for h in hits} >= {("alpha",), ("beta",)}
    scoped = json.loads(
        run_cli(
            "--vault",
            str(vault),
            "search",
            "deploy script",
            "--project",
            "beta",
            "--json",
            check=True,
        ).stdout
    )
    assert scoped and all(h["projects"] in ([], ["beta"]) for h in scoped)
    plain = run_cli("--vault", str(vault), "search", "deploy script", check=True).stdout
    assert "[alpha]" in plain and "[beta]" in plain


def test_promotion_records_the_projects_of_a_notes_sources(vault: Path) -> None:
    with Memory(vault, refresh_interval_s=0) as m:
        at = NOW - dt.timedelta(days=1)
        for i in range(30):  # each project keeps its newest 10 in the log: 5 of each promoted
            project = "alpha" if i % 2 else None
            m.remember(
                f"Kitchen renovation step {i}: the tiles and the grout.",
                session="kitchen",
                at=at + dt.timedelta(minutes=i),
                project=project,
                now=NOW,
            )
        m.run_job("promotion", now=NOW)
        notes = [
            p.read_text(encoding="utf-8") for p in (vault / "memory" / "long_term").glob("*.md")
        ]
        promoted = [t for t in notes if "Kitchen renovation step" in t]
        scoped = [t for t in promoted if "[alpha]: Kitchen" in t]
        assert scoped and any("[alpha]: Kitchen renovation step 1:" in t for t in scoped)
        assert all("\nprojects: [alpha]\n" in t for t in scoped)
        # the session's global events are a session of their own, in a global note
        assert all("\nprojects:" not in t for t in promoted if t not in scoped)
        hits = [h for h in m.search("kitchen renovation tiles", limit=50) if h.kind == "note"]
        assert ("alpha",) in {h.projects for h in hits} <= {("alpha",), ()}


def test_forget_project_removes_one_project_with_dry_run_first(vault: Path) -> None:
    _fill(vault)
    base = ("--vault", str(vault), "forget", "--project", "beta")
    listing = run_cli(*base, "--dry-run")
    assert listing.returncode == 0, listing.stderr
    assert listing.stdout.count("[beta]") == len(BETA) and "[alpha]" not in listing.stdout
    assert "would remove: 3 event(s)" in listing.stdout
    assert "flyway" in (vault / SHORT_TERM).read_text(encoding="utf-8")  # nothing removed yet
    refused = run_cli(*base)  # not on a terminal, without --yes
    assert refused.returncode == 2 and "--yes" in refused.stderr
    done = json.loads(run_cli(*base, "--yes", "--json", check=True).stdout)
    assert done["done"] and done["counts"]["events"] == len(BETA)
    log = (vault / SHORT_TERM).read_text(encoding="utf-8")
    assert "[beta]" not in log and all(b not in log for b in BETA)
    assert all(a in log for a in ALPHA) and "Lunch break number 3" in log
    status = json.loads(run_cli("--vault", str(vault), "status", "--json", check=True).stdout)
    assert "beta" not in status["projects"] and status["projects"]["alpha"] == 3
    nothing = run_cli(*base, "--yes")
    assert nothing.returncode == 1  # nothing left to match


@pytest.mark.parametrize("name", ["two words", "a[b]", ""])
def test_forget_refuses_what_is_no_project_name(vault: Path, name: str) -> None:
    done = run_cli("--vault", str(vault), "forget", "--project", name, "--yes")
    assert done.returncode == 2 and "--project" in done.stderr


def test_a_session_label_two_projects_share_makes_a_note_each(vault: Path) -> None:
    with Memory(vault, refresh_interval_s=0) as m:
        at = NOW - dt.timedelta(days=1)
        for i in range(14):  # 4 of each project leave the window
            for j, project in enumerate(("alpha", "beta")):
                m.remember(
                    f"Garden plan {project} item {i}: the raised beds and the compost.",
                    session="session 1",
                    at=at + dt.timedelta(minutes=2 * i + j),
                    project=project,
                    now=NOW,
                )
        m.run_job("promotion", now=NOW)
        notes = [
            p.read_text(encoding="utf-8") for p in (vault / "memory" / "long_term").glob("*.md")
        ]
        held = [t for t in notes if "Garden plan" in t]
        assert len(held) == 2
        for text in held:
            one = "alpha" if "\nprojects: [alpha]\n" in text else "beta"
            assert f"\nprojects: [{one}]\n" in text
            assert "Garden plan alpha" not in text or "Garden plan beta" not in text


def test_forget_project_takes_the_name_off_a_note_that_keeps_other_events(vault: Path) -> None:
    note = vault / "memory" / "long_term" / "anna.md"
    note.write_text(
        "---\ntitle: Anna\ntags: [entity]\nprojects: [alpha, beta]\n---\n"
        "Anna reviews the pull requests.\n\n## Sources\n"
        "- 2026-11-20T09:00:00 **user** (s1) [alpha]: Anna reviews the alpha API. ^e-0000000001\n"
        "- 2026-11-20T09:01:00 **user** (s2) [beta]: Anna reviews the homepage. ^e-0000000002\n",
        encoding="utf-8",
    )
    run_cli("--vault", str(vault), "forget", "--project", "beta", "--yes", check=True)
    text = note.read_text(encoding="utf-8")
    assert "\nprojects: [alpha]\n" in text
    assert "alpha API" in text and "the homepage" not in text
    assert "Anna reviews the pull requests." in text  # the person's line stays


def test_each_project_keeps_its_own_last_steps_in_short_term_memory(vault: Path) -> None:
    with Memory(vault, refresh_interval_s=0) as m:
        at = NOW - dt.timedelta(hours=3)
        for i, project in enumerate([None] * 12 + ["alpha"] * 12 + ["beta"] * 12):
            m.remember(
                f"Step {i} of the {project or 'global'} work.",
                at=at + dt.timedelta(minutes=i),
                project=project,
                now=NOW,
            )
        m.run_job("promotion", now=NOW)
        kept = m.short_term().events
        for project in ("alpha", "beta", None):
            assert sum(1 for e in kept if e.project == project) == 10
        # Back in alpha after beta's work: its own last steps are its recent window.
        text = m.context("What next?", budget=2000, now=NOW, project="alpha").text
        recent = text.split("[CRITICAL_CONTEXT_LAST_10_STEPS]", 1)[1]
        assert "Step 23 of the alpha work." in recent and "Step 14 of the alpha" in recent
        assert "beta work" not in recent


def test_a_projects_recent_window_is_found_once_per_version_of_the_log(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # In a project the window is found by walking the log back past the other projects' newer
    # events; it does not depend on the prompt, so it is found again only when the log changes.
    found: list[str | None] = []
    recent = projects.recent

    def counting(events: Any, n: int, scope: projects.Scope) -> Any:
        found.append(scope.project)
        return recent(events, n, scope)

    monkeypatch.setattr(projects, "recent", counting)
    with Memory(vault, refresh_interval_s=0) as m:
        at = NOW - dt.timedelta(hours=3)
        for i, project in enumerate(["alpha", "beta"] * 6):
            when = at + dt.timedelta(minutes=i)
            m.remember(f"Step {i} of the {project} work.", at=when, project=project, now=NOW)
        m.context("What next?", budget=2000, now=NOW, project="alpha")
        again = m.context("Where were we?", budget=2000, now=NOW, project="alpha").text
        m.context("What next?", budget=2000, now=NOW, project="beta")
        assert found == ["alpha", "beta"]
        assert "Step 10 of the alpha work." in again
        m.remember("Step 12 of the alpha work.", at=at + dt.timedelta(minutes=12), project="alpha")
        text = m.context("What next?", budget=2000, now=NOW, project="alpha").text
        assert found == ["alpha", "beta", "alpha"]
        assert "Step 12 of the alpha work." in text.split("[CRITICAL_CONTEXT_LAST_10_STEPS]", 1)[1]


def test_an_event_indexed_again_for_its_new_preceding_message_keeps_its_project(
    vault: Path,
) -> None:
    # The index holds each event with the message before it in its session (indexer.py); a
    # message said between two others makes the later one be indexed again, from what the index
    # stored of it: its project must come along, or a scoped search loses it.
    at = NOW - dt.timedelta(days=1)
    with Memory(vault, refresh_interval_s=0) as m:
        m.remember("Which broker does the queue use?", at=at, session="s", project="alpha")
        m.remember(
            "The queue runs on rabbitmq.",
            at=at + dt.timedelta(minutes=2),
            session="s",
            project="alpha",
        )
        assert m.search("rabbitmq", project="alpha")[0].projects == ("alpha",)  # indexed once
        m.remember(
            "Let me check the queue config.",
            at=at + dt.timedelta(minutes=1),
            session="s",
            project="alpha",
        )
        found = m.search("rabbitmq", project="alpha")
        assert found and found[0].excerpt == "The queue runs on rabbitmq."
        assert found[0].projects == ("alpha",)


# A project's memories, and another project's that use some of the same words far more often:
# by the whole vault's statistics "rollback" is common and "staging" rare, in alpha's the other
# way round.
GAMMA = [
    "The rollback of the staging server took an hour.",
    "Staging ran out of disk during the load test.",
    "Staging keeps a copy of last week's data.",
    "The release notes mention the rollback plan.",
] + [f"Lunch with the team, topic {i}." for i in range(12)]
DELTA = [f"Rollback number {i} of the payments service, after alert {i}." for i in range(12)]


def test_a_projects_ranking_is_unchanged_when_another_project_shares_its_words(
    tmp_path: Path,
) -> None:
    def remember(vault: Path, with_delta: bool) -> None:
        Memory.init(vault)
        with Memory(vault, refresh_interval_s=0) as m:
            at = NOW - dt.timedelta(days=3)
            # Both projects' sessions are named alike, and their messages interleave in time.
            for i, text in enumerate(GAMMA):
                session = "standup" if i % 2 else None
                gamma_at = at + dt.timedelta(minutes=2 * i)
                m.remember(text, session=session, at=gamma_at, project="gamma", now=NOW)
                if with_delta and i < len(DELTA):
                    delta_at = at + dt.timedelta(minutes=2 * i + 1)
                    m.remember(DELTA[i], session=session, at=delta_at, project="delta", now=NOW)

    prompts = ("staging rollback", "What happened to the staging server?", "rollback plan")
    ranked: dict[bool, list[list[tuple[str, str]]]] = {}
    scores: dict[bool, list[float]] = {}
    contexts: dict[bool, list[str]] = {}
    for with_delta in (False, True):
        vault = tmp_path / ("shared" if with_delta else "alone")
        remember(vault, with_delta)
        with Memory(vault, refresh_interval_s=0) as m:
            ranked[with_delta], scores[with_delta], contexts[with_delta] = [], [], []
            for prompt in prompts:
                hits = m.search(prompt, project="gamma", limit=20)
                assert all(r.projects == ("gamma",) for r in hits), prompt
                ranked[with_delta].append([(r.event_id, r.excerpt) for r in hits])
                scores[with_delta] += [r.score for r in hits]
                text = m.context(prompt, budget=500, now=NOW, project="gamma").text
                contexts[with_delta].append(text)
    # The same hits in the same order, the same context word for word, and the same scores but
    # for the rounding of the stored field lengths the average length is scaled by.
    assert ranked[True] == ranked[False]
    assert contexts[True] == contexts[False]
    assert scores[True] == pytest.approx(scores[False], rel=0.01)


def test_a_name_that_speaks_only_in_another_project_keeps_its_meaning_in_this_one(
    tmp_path: Path,
) -> None:
    # Speakers' names are taken out of a prompt before it is embedded (semantic.py): in a
    # project, only the names of those who speak in it, as in a vault of its own. "John" speaks
    # only in delta; in gamma he is someone its speakers talk about.
    gamma = [
        ("Gina", "John and I took a short trip to Rome last spring."),
        ("Jon", "The staging server ran out of disk during the load test."),
        ("Gina", "I bought new dance shoes for the studio."),
        ("Jon", "John says Paris is lovely in May."),
    ] + [("Gina", f"Lunch with the team, topic {i}.") for i in range(12)]
    delta = [("John", f"Rollback number {i} of the payments service.") for i in range(12)]
    prompt = "Which city have both Jean and John visited?"
    near: dict[bool, dict[str, float]] = {}
    contexts: dict[bool, str] = {}
    for with_delta in (False, True):
        vault = tmp_path / ("shared" if with_delta else "alone")
        Memory.init(vault)
        with Memory(vault, refresh_interval_s=0) as m:
            at = NOW - dt.timedelta(days=3)
            for i, (role, text) in enumerate(gamma):
                m.remember(text, role=role, at=at + dt.timedelta(minutes=2 * i), project="gamma")
                if with_delta and i < len(delta):
                    role, text = delta[i]
                    later = at + dt.timedelta(minutes=2 * i + 1)
                    m.remember(text, role=role, at=later, project="delta")
            contexts[with_delta] = m.context(prompt, budget=500, now=NOW, project="gamma").text
            assert m.semantic is not None
            among = project_search.own_event_keys(m.indexer.index, projects.Scope("gamma"))
            near[with_delta] = m.semantic.nearness(prompt, among=among)
    assert near[True] and near[True] == pytest.approx(near[False], abs=1e-6)
    assert contexts[True] == contexts[False]


def test_a_scoped_context_scores_no_posting_of_another_project_that_cannot_come_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Epsilon's events share a word with gamma's, one every gamma memory is about ("team"), so
    # none can match clearly better than gamma's best for a prompt gamma knows: the search
    # reads their postings but scores none of them, and the context is the one gamma has alone.
    epsilon = [f"The team met about the quarterly budget, item {i}." for i in range(12)]
    prompt = "What did the team find on the staging server?"

    def remember(vault: Path, others: list[str]) -> None:
        Memory.init(vault)
        with Memory(vault, refresh_interval_s=0) as m:
            at = NOW - dt.timedelta(days=3)
            for i, text in enumerate(GAMMA):
                m.remember(text, at=at + dt.timedelta(minutes=2 * i), project="gamma", now=NOW)
                if i < len(others):
                    later = at + dt.timedelta(minutes=2 * i + 1)
                    m.remember(others[i], at=later, project="epsilon", now=NOW)

    remember(tmp_path / "alone", [])
    with Memory(tmp_path / "alone", refresh_interval_s=0) as m:
        alone = m.context(prompt, budget=500, now=NOW, project="gamma").text
    remember(tmp_path / "shared", epsilon)
    with Memory(tmp_path / "shared", refresh_interval_s=0) as m:
        m.refresh(force=True)
        index = m.indexer.index
        scored = _count_scored_postings(index, monkeypatch)
        epsilon_docs = set(index._searcher.docs_for_query(Term("projects", "epsilon")))
        assert len(epsilon_docs) == len(epsilon)
        assert m.context(prompt, budget=500, now=NOW, project="gamma").text == alone
        found = scored()
        assert found and not found & epsilon_docs
        # Unscoped, the same words score epsilon's memories: they do match.
        m.context(prompt, budget=500, now=NOW)
        assert scored() & epsilon_docs
        # A prompt naming epsilon scores its matches, and they come in (docs/projects.md).
        text = m.context("the team in epsilon", budget=2000, now=NOW, project="gamma").text
        assert scored() & epsilon_docs
        assert "quarterly budget" in text


def _count_scored_postings(index: Any, monkeypatch: pytest.MonkeyPatch) -> Callable[[], set[int]]:
    """Note the document of every posting `index` scores from now on: BM25F looks up each
    scored document's field length (index_weighting.SegmentLengthsBM25F), once a posting. The
    returned function gives those noted since it was last called, by the index's numbers."""
    weighting = index._weighting
    real = weighting.segment_lengths
    seen: set[tuple[str, int]] = set()

    class Counted:
        def __init__(self, lengths: Any, segment: str) -> None:
            self.lengths, self.segment = lengths, segment

        def __getitem__(self, docnum: int) -> int:
            seen.add((self.segment, docnum))
            return int(self.lengths[docnum])

    def counted(reader: Any, fieldname: str) -> Any:
        found = real(reader, fieldname)
        if found is None:
            return None
        return (Counted(found[0], reader.segment().segment_id()), *found[1:])

    monkeypatch.setattr(weighting, "segment_lengths", counted)
    weighting._scorers.clear()  # made again, with the counted lengths

    def taken() -> set[int]:
        reader = index._searcher.reader()
        offsets = {leaf.segment().segment_id(): at for leaf, at in reader.leaf_readers()}
        out = {offsets[segment] + docnum for segment, docnum in seen}
        seen.clear()
        return out

    return taken


def _digests_made(monkeypatch: pytest.MonkeyPatch) -> list[str | None]:
    """The project of every scope projects.scoped_digest makes short-term sections for, from now
    on (None: no project)."""
    made: list[str | None] = []
    scoped_digest = projects.scoped_digest

    def counting(text: str, scope: projects.Scope, in_scope: Callable[[str], bool]) -> str:
        made.append(scope.project)
        return scoped_digest(text, scope, in_scope)

    monkeypatch.setattr(projects, "scoped_digest", counting)
    return made


def test_a_projects_short_term_sections_are_made_once_per_log_and_searcher(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each context in a project shows the short-term sections as the project has them
    # (projects.scoped_digest parses their fact lines): made once while the log and the index
    # stay as they are, and anew after an event, whose fact the next context shows.
    made = _digests_made(monkeypatch)
    with Memory(vault, refresh_interval_s=0) as m:
        m.remember("The alpha release ships on Friday.", at=NOW, project="alpha")
        first = m.context("When does the release ship?", budget=2000, now=NOW, project="alpha")
        assert made
        made.clear()
        again = m.context("Who ships it?", budget=2000, now=NOW, project="alpha")
        assert made == [] and again.text.split("## Relevant")[0].count("Friday") == (
            first.text.split("## Relevant")[0].count("Friday")
        )
        m.context("Who ships it?", budget=2000, now=NOW, project="beta")
        assert made  # another scope
        made.clear()
        m.remember("My favourite colour is teal.", at=NOW, project="alpha")
        m.run_job("reflection", now=NOW + dt.timedelta(hours=1))
        later = m.context("Who ships it?", budget=2000, now=NOW, project="alpha")
        assert made and "teal" in later.text


def test_each_scopes_short_term_sections_are_kept_while_contexts_go_from_scope_to_scope(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A daemon asked from two projects and from no project in turn: each scope's short-term
    # sections are made once while the log and the index stay as they are, not again each time
    # the scope changes; what each context shows is the same as the first time.
    made = _digests_made(monkeypatch)
    with Memory(vault, refresh_interval_s=0) as m:
        m.remember("The alpha release ships on Friday.", at=NOW, project="alpha")
        m.remember("The beta release ships on Monday.", at=NOW, project="beta")
        m.run_job("reflection", now=NOW + dt.timedelta(hours=1))
        scopes = ("alpha", None, "beta")
        first = [m.context("Who ships it?", budget=2000, now=NOW, project=p).text for p in scopes]
        assert set(made) == set(scopes)
        once = len(made)
        again = [m.context("Who ships it?", budget=2000, now=NOW, project=p).text for p in scopes]
        assert len(made) == once
        assert again == first


def test_the_projects_are_counted_once_per_searcher_and_anew_after_a_commit(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every context in a project asks which projects the vault holds (its prompt may name one):
    # counted once per searcher, not once per context, and a commit's new project counts.
    counted: list[str] = []
    doc_frequency = SegmentReader.doc_frequency

    def counting(self: Any, fieldname: str, text: Any) -> Any:
        if fieldname == "projects":
            counted.append(str(text))
        return doc_frequency(self, fieldname, text)

    monkeypatch.setattr(SegmentReader, "doc_frequency", counting)
    with Memory(vault, refresh_interval_s=0) as m:
        for project in ("alpha", "beta"):
            m.remember(f"The {project} release ships on Friday.", at=NOW, project=project)
        first = m.context("When does the release ship?", budget=500, now=NOW, project="alpha")
        assert counted
        counted.clear()
        again = m.context("When does the release ship?", budget=500, now=NOW, project="alpha")
        assert again.text == first.text and counted == []
        m.remember("The gamma release slipped.", at=NOW, project="gamma")
        m.context("What did gamma ship?", budget=500, now=NOW, project="alpha")
        assert set(m.indexer.index.project_counts()) >= {"alpha", "beta", "gamma"}


# A project's sessions, and another's said in between them: the memory jobs run at each session's
# end, as the daemon runs them, over the one log both write to.
EPSILON = [
    "The rollback of the staging server took an hour. I want to fix the staging disk.",
    "Staging ran out of disk during the load test, said Maria.",
    "Staging keeps a copy of last week's data. We need to buy more disk for Maria's team.",
    "The release notes mention the rollback plan. Should we tell Oscar?",
] + [f"Lunch with the team at Luigi's, topic {i}." for i in range(14)]
EPSILON[5] = "Oscar came along to lunch at Luigi's today."
ZETA = [
    f"Rollback number {i} of the payments service. I plan to call Maria about Stripe."
    f" I love {('camping trips', 'board games')[i % 2]}."
    for i in range(18)
]


def test_a_scoped_context_in_a_shared_vault_is_the_projects_own_with_the_jobs_run(
    tmp_path: Path,
) -> None:
    # Reflection digests the short-term log (summary, working memory, goals, tasks, facts): in a
    # shared vault each project's digest is its own, made from its events, so a context in it
    # holds no line another project's events gave, and its ranking none of their words. And
    # promotion files each event as alone: never as the answer to another project's turn of a
    # session named alike, nor in the note another project's events made about a name.
    def remember(vault: Path, shared: bool) -> None:
        Memory.init(vault)
        at = NOW - dt.timedelta(days=10)
        if shared:  # zeta's note about Oscar, made from its events
            said = ev.make_event("Oscar Diaz joined the payments team.", "cy", "intro", at, "zeta")
            (vault / "memory" / "long_term" / "Oscar.md").write_text(
                "---\ntitle: Oscar\ntags: [person]\nprojects: [zeta]\n---\n## Summary\n"
                f"Oscar is on the payments team.\n\n## Sources\n{ev.render(said)}\n"
            )
        with Memory(vault, refresh_interval_s=0) as m:
            for i, text in enumerate(EPSILON):
                session, when = f"session {i // 4}", at + dt.timedelta(hours=5 * i)
                project = "epsilon" if shared else None
                m.remember(text, "bob" if i % 2 else "ann", session, when, NOW, project)
                if shared:
                    role = "dee" if i % 2 else "cy"
                    later = when + dt.timedelta(minutes=1)
                    m.remember(ZETA[i], role, session, later, NOW, "zeta")
                if i % 4 == 3:
                    m.run_job("all", now=when + dt.timedelta(minutes=2))
            m.run_job("all", now=at + dt.timedelta(hours=5 * len(EPSILON)))

    prompts = ("staging rollback disk", "What did Maria say about the disk?", "Oscar rollback plan")
    contexts: dict[bool, list[str]] = {}
    for shared in (False, True):
        vault = tmp_path / ("shared" if shared else "alone")
        remember(vault, shared)
        with Memory(vault, refresh_interval_s=0) as m:
            contexts[shared] = [
                m.context(prompt, budget=budget, now=NOW, project="epsilon").text
                for prompt in prompts
                for budget in (500, 2000)
            ]
        notes = [p.read_text() for p in (vault / "memory" / "long_term").glob("*.md")]
        assert not any("[zeta]:" in n and "[epsilon]:" in n for n in notes)
    assert "Stripe" not in "".join(contexts[True])
    assert contexts[True] == contexts[False]


def _long_term(vault: Path, project: str | None) -> dict[str, str]:
    """The notes a project has: title -> its events' lines (the project's tag left out), its
    own and the global ones, as it would have them in a vault of its own (every note of a
    vault without projects)."""
    out: dict[str, str] = {}
    for path in sorted((vault / "memory" / "long_term").glob("*.md")):
        text = path.read_text()
        lines = [ln for ln in text.splitlines() if ln.startswith("- ") and " ^e-" in ln]
        if project is not None:
            if any(re.search(r"\) \[[^\]]+\]:", ln) and f"[{project}]:" not in ln for ln in lines):
                continue  # another project's
            lines = [ln.replace(f" [{project}]:", ":") for ln in lines]
        title = re.search(r"^title: (.*)$", text, re.MULTILINE)
        out[title.group(1) if title else path.stem] = "\n".join(lines)
    return out


def test_a_projects_notes_in_a_shared_vault_are_those_it_has_alone(tmp_path: Path) -> None:
    # Two projects that talk of a dog named Max in the same words: each founds its own note
    # about Max, with its own title, and organization merges neither into the other's (a
    # project's memory would come into the other's contexts), as each has alone.
    def talk(project: str, who: str) -> list[str]:
        return [
            f"Max the dog chewed the {project} couch again, said {who}.",
            f"We took Max to the vet for the {project} checkup.",
            f"Max loves the park near the {project} office.",
            f"Max slept all afternoon after the {project} walk.",
        ] + [f"Lunch with the {project} team, topic {i}." for i in range(10)]

    def remember(vault: Path, shared: bool) -> None:
        Memory.init(vault)
        at = NOW - dt.timedelta(days=10)
        with Memory(vault, refresh_interval_s=0) as m:
            for i, (a, b) in enumerate(
                zip(talk("epsilon", "Ann"), talk("zeta", "Cy"), strict=True)
            ):
                when = at + dt.timedelta(hours=i)
                session = f"session {i // 7}"
                m.remember(a, "ann", session, when, NOW, "epsilon" if shared else None)
                if shared:
                    m.remember(b, "cy", session, when + dt.timedelta(minutes=1), NOW, "zeta")
                if i % 7 == 6:
                    m.run_job("all", now=when + dt.timedelta(minutes=2))
            m.run_job("all", now=at + dt.timedelta(days=1))

    remember(tmp_path / "alone", shared=False)
    remember(tmp_path / "shared", shared=True)
    alone = _long_term(tmp_path / "alone", None)
    assert "Max" in alone
    assert _long_term(tmp_path / "shared", "epsilon") == alone
    notes = [p.read_text() for p in (tmp_path / "shared" / "memory" / "long_term").glob("*.md")]
    assert not any("[zeta]:" in n and "[epsilon]:" in n for n in notes)


def test_a_project_ages_with_its_own_sessions_while_another_project_works(
    tmp_path: Path,
) -> None:
    # A fact learned from a project's event stays in the short-term Facts for a week after its
    # event left the log, and a note fades by the days since it was last touched, both counted
    # by the project's own sessions: another project's sessions a month later leave them as
    # they were, and a context in the project is the one it has alone.
    at = NOW - dt.timedelta(days=60)

    def remember(vault: Path, shared: bool) -> None:
        Memory.init(vault)
        with Memory(vault, refresh_interval_s=0) as m:
            m.remember(
                "I love nintendo games.", "nate", "session 0", at, NOW, "p" if shared else None
            )
            for i in range(40):
                when = at + dt.timedelta(hours=i + 1)
                text = f"Lunch break number {i} at the usual place."
                m.remember(
                    text, "nate", f"session {1 + i // 10}", when, NOW, "p" if shared else None
                )
                if i % 10 == 9:
                    m.run_job("all", now=when + dt.timedelta(minutes=2))
            for i in range(20 if shared else 0):  # the other project, a month later
                when = at + dt.timedelta(days=30 + i)
                m.remember(f"The q release number {i} shipped.", "cy", f"q {i}", when, NOW, "q")
                m.run_job("all", now=when + dt.timedelta(minutes=2))

    contexts, notes = [], []
    for shared in (False, True):
        vault = tmp_path / ("shared" if shared else "alone")
        remember(vault, shared)
        with Memory(vault, refresh_interval_s=0) as m:
            when = at + dt.timedelta(days=2)
            contexts.append(m.context("nintendo", budget=2000, now=when, project="p").text)
        notes.append(
            {
                path.name: path.read_text().replace(" [p]:", ":").replace("projects: [p]\n", "")
                for folder in ("long_term", "archive/notes")
                for path in sorted((vault / "memory" / folder).glob("*.md"))
                if "[q]:" not in path.read_text()
            }
        )
    assert "nintendo games: something nate loves" in contexts[0].lower()
    assert contexts[1] == contexts[0]
    assert notes[1] == notes[0]


def _facts(vault: Path) -> str:
    return stm_body((vault / SHORT_TERM).read_text(encoding="utf-8"), "Facts")


def test_two_projects_facts_of_one_key_stand_side_by_side(vault: Path) -> None:
    """A fact's key is its project's: beta's deadline is no new value of alpha's (nor of the
    global one), and each project's context shows its own."""
    at = NOW - dt.timedelta(hours=2)
    with Memory(vault, refresh_interval_s=0) as m:
        m.remember("The deadline is Friday.", at=at, project="alpha", now=NOW)
        m.remember("The deadline is December 12.", at=at + dt.timedelta(minutes=1), now=NOW)
        m.remember(
            "The deadline is January 9.", at=at + dt.timedelta(minutes=2), project="beta", now=NOW
        )
        m.run_job("reflection", now=NOW)
        body = _facts(vault)
        assert "deadline: Friday" in body and "deadline: January 9" in body, body
        assert "deadline: December 12" in body and "superseded" not in body, body
        m.remember(
            "The deadline moved to Monday.",
            at=at + dt.timedelta(minutes=3),
            project="alpha",
            now=NOW,
        )
        m.run_job("reflection", now=NOW)
        current = {fl.fact.value: fl for fl in facts_mod.parse(_facts(vault))}
        assert set(current) == {"Monday", "December 12", "January 9"}, _facts(vault)
        assert [s.value for s in current["Monday"].superseded] == ["Friday"]
        assert not current["January 9"].superseded and not current["December 12"].superseded
        alpha = m.context("When is the deadline?", budget=2000, now=NOW, project="alpha").text
        assert "deadline: Monday" in alpha and "January 9" not in alpha


def test_forget_project_drops_its_facts_projects_from_the_reflection_state(vault: Path) -> None:
    """reflection.json keeps the project of each short-term fact's event (its event may leave
    the log before the fact leaves the Facts): a forgotten project's name and event ids leave
    it with the forget, not at the next reflection."""
    at = NOW - dt.timedelta(hours=2)
    with Memory(vault, refresh_interval_s=0) as m:
        m.remember("The deadline is Friday.", at=at, project="alpha", now=NOW)
        m.remember(
            "The budget is 4000 euros.", at=at + dt.timedelta(minutes=1), project="beta", now=NOW
        )
        m.run_job("reflection", now=NOW)
        state = m.locations.state / "reflection.json"
    kept = json.loads(state.read_text(encoding="utf-8"))["fact_projects"]
    assert sorted(kept.values()) == ["alpha", "beta"]
    run_cli("--vault", str(vault), "forget", "--project", "beta", "--yes", check=True)
    assert "budget" not in _facts(vault) and "deadline: Friday" in _facts(vault)
    left = json.loads(state.read_text(encoding="utf-8"))
    assert list(left["fact_projects"].values()) == ["alpha"] and "extracted_through" in left
