"""The guard in a project of a shared vault (docs/check.md, docs/projects.md): a response in
project P is held to P's and the global memories, another project's only where it names that
project; without a project, to every memory, as always."""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from pathlib import Path

import yaml

from brainiac import Memory
from brainiac.guard.check_facts.verdicts import CheckResult
from brainiac.store.vault import SHORT_TERM
from conftest import run_cli

NOW = dt.datetime(2026, 11, 24, 12, 0)
AT = NOW - dt.timedelta(hours=2)


def _two_deadlines(vault: Path) -> tuple[int, int]:
    """alpha's deadline is Friday, beta's Monday, each a short-term fact of its own; the lines
    they stand on in the short-term document (alpha's, beta's)."""
    with Memory(vault, refresh_interval_s=0) as m:
        m.remember("The deadline is Friday.", at=AT, project="alpha", now=NOW)
        m.remember(
            "The deadline is Monday.", at=AT + dt.timedelta(minutes=2), project="beta", now=NOW
        )
        for i in range(4):  # the last events are neither project's: the facts are the witnesses
            m.remember(
                f"Lunch break number {i} at the usual place.",
                at=AT + dt.timedelta(minutes=5 + i),
                now=NOW,
            )
        m.run_job("reflection", now=NOW)
    lines = (vault / SHORT_TERM).read_text(encoding="utf-8").splitlines()

    def line_of(fact: str) -> int:
        return next(i for i, line in enumerate(lines) if line.startswith(fact)) + 1

    return line_of("- deadline: Friday"), line_of("- deadline: Monday")


def _against(result: CheckResult) -> list[tuple[str, str, int]]:
    return [(c.stored, c.file, c.line) for c in result.conflicts]


def test_in_a_project_its_own_fact_judges_and_another_projects_fact_of_the_key_does_not(
    vault: Path,
) -> None:
    friday, monday = _two_deadlines(vault)
    with Memory(vault, refresh_interval_s=0) as m:
        # alpha: Friday is its deadline; beta's Monday neither supports nor flags anything
        said_monday = m.check("The deadline is Monday.", now=NOW, project="alpha")
        assert _against(said_monday) == [("Friday", SHORT_TERM, friday)], said_monday
        said_friday = m.check("The deadline is Friday.", now=NOW, project="alpha")
        assert said_friday.status == "consistent" and not said_friday.conflicts, said_friday
        # and the other way round in beta
        said_friday = m.check("The deadline is Friday.", now=NOW, project="beta")
        assert _against(said_friday) == [("Monday", SHORT_TERM, monday)], said_friday
        said_monday = m.check("The deadline is Monday.", now=NOW, project="beta")
        assert said_monday.status == "consistent" and not said_monday.conflicts, said_monday


def test_a_response_naming_another_project_is_held_to_that_projects_facts(vault: Path) -> None:
    _, monday = _two_deadlines(vault)
    with Memory(vault, refresh_interval_s=0) as m:
        wrong = m.check("In beta the deadline is Friday.", now=NOW, project="alpha")
        assert _against(wrong) == [("Monday", SHORT_TERM, monday)], wrong
        right = m.check("In beta the deadline is Monday.", now=NOW, project="alpha")
        assert right.status == "consistent" and not right.conflicts, right


def test_a_check_without_a_project_knows_every_projects_facts_as_before(vault: Path) -> None:
    friday, monday = _two_deadlines(vault)
    with Memory(vault, refresh_interval_s=0) as m:
        # both deadlines are known: each statement meets the other project's value
        assert _against(m.check("The deadline is Monday.", now=NOW)) == [
            ("Friday", SHORT_TERM, friday)
        ]
        assert _against(m.check("The deadline is Friday.", now=NOW)) == [
            ("Monday", SHORT_TERM, monday)
        ]


def test_another_projects_newest_event_is_no_recent_knowledge_of_this_one(vault: Path) -> None:
    """The last events' facts override the stored ones: in alpha, only alpha's and the global
    events count, so beta's newest word on its deadline changes nothing of alpha's."""
    _two_deadlines(vault)
    with Memory(vault, refresh_interval_s=0) as m:
        m.remember(
            "The deadline moved to Wednesday.",
            at=AT + dt.timedelta(minutes=30),
            project="beta",
            now=NOW,
        )
        # unscoped, beta's event moves every deadline the memory knows, alpha's too
        unscoped = m.check("The deadline is Friday.", now=NOW)
        assert unscoped.status == "conflict", unscoped
        alpha = m.check("The deadline is Friday.", now=NOW, project="alpha")
        assert alpha.status == "consistent" and not alpha.conflicts, alpha


def test_the_cli_checks_in_the_project_it_is_given(vault: Path) -> None:
    """`brainiac check --project NAME` (a real process), and `[projects] isolate` applies as to
    a context: with it, naming another project brings in none of its facts."""
    friday, _ = _two_deadlines(vault)
    args = ("--vault", str(vault), "check", "--json", "--now", NOW.isoformat())
    ok = run_cli(*args, "--project", "alpha", "The deadline is Friday.")
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["status"] == "consistent"
    flagged = run_cli(*args, "--project", "beta", "The deadline is Friday.")
    assert flagged.returncode == 1, flagged.stderr
    assert [c["stored"] for c in json.loads(flagged.stdout)["conflicts"]] == ["Monday"]
    config = vault / ".brainiac" / "config.toml"
    text, n = re.subn(r"^# isolate = .*$", "isolate = true", config.read_text("utf-8"), flags=re.M)
    assert n == 1
    config.write_text(text, encoding="utf-8")
    isolated = run_cli(*args, "--project", "alpha", "In beta the deadline is Monday.")
    assert isolated.returncode == 1, isolated.stderr
    conflicts = json.loads(isolated.stdout)["conflicts"]
    assert [(c["stored"], c["line"]) for c in conflicts] == [("Friday", friday)], conflicts


def test_in_a_vault_without_projects_a_check_in_one_is_the_unscoped_check(tmp_path: Path) -> None:
    """Every memory of a vault without projects is global, so every project sees all of it: on
    the guard's labelled corpus each response gets, in a project, what it gets unscoped."""
    corpus = Path(__file__).parent / "check_corpus"
    cases = yaml.safe_load((corpus / "cases.yaml").read_text(encoding="utf-8"))
    vault = tmp_path / "corpus"
    shutil.copytree(corpus / "vault", vault)
    with Memory(vault, refresh_interval_s=0) as m:
        now = max(e.at for e in m.short_term().events if e.at)
        for case in cases:
            unscoped = m.check(str(case["response"]), now=now)
            assert m.check(str(case["response"]), now=now, project="alpha") == unscoped, case


def test_another_projects_events_and_their_observations_are_no_evidence_here(vault: Path) -> None:
    """The event path too: in alpha, beta's events are no evidence, nor the observations read
    from them, even in a global note (a note or a month of the archive holds every project's)."""
    with Memory(vault, refresh_interval_s=0) as m:
        said = m.remember(
            "I went to a pottery class on 20 November.", project="beta", at=AT, now=NOW
        )
        told = m.remember(
            "Guess what, we finally did it!", role="Caroline", project="beta", at=AT, now=NOW
        )
        for i in range(4):
            m.remember(f"Lunch break number {i}.", at=AT + dt.timedelta(minutes=5 + i), now=NOW)
        note = vault / "memory" / "long_term" / "caroline.md"
        note.write_text(
            "---\ntitle: Caroline\n---\n# Caroline\n\n## Observations\n"
            f"- Caroline adopted a puppy named Shadow on 2026-11-23. (2026-11-24, {told.id})\n",
            encoding="utf-8",
        )
        for response, source in (
            ("You went to a pottery class on 2 November.", said.text),
            ("Caroline adopted a puppy named Max.", "Caroline adopted a puppy named Shadow"),
        ):
            for project in (None, "beta"):
                there = m.check(response, now=NOW, project=project)
                assert [c.stored[: len(source)] for c in there.conflicts] == [source], there
            here = m.check(response, now=NOW, project="alpha")
            assert here.status == "unverified" and not here.conflicts, here
