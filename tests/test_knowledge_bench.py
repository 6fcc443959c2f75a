"""benchmarks/knowledge.py, the measure of issue 30, on a small LoCoMo-format file of its own.

The vault is built as the benchmark builds it (one `remember` per turn, the memory jobs at each
session's end) and scored through the real script in a subprocess; the readability checks read
real notes written into a real vault.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from brainiac import Memory
from conftest import load_benchmark

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
SCRIPT = BENCHMARKS / "knowledge.py"

TURNS = [
    ("Caroline", "D1:1", "Hi Mel! Fun fact: I'm from Sweden."),
    ("Melanie", "D1:2", "No! Big news here: we got another cat named Bailey."),
    ("Caroline", "D1:3", "Aww, lovely. How was your weekend?"),
    ("Melanie", "D1:4", "We went hiking by the lake, it was so peaceful."),
]
LATER = [
    ("Caroline", "D2:1", "Hey, how is Bailey doing?"),
    ("Melanie", "D2:2", "Great, she sleeps all day. I play the clarinet now, too."),
]
OBSERVED = {
    "session_1_observation": {
        "Caroline": [
            ["Caroline is from Sweden.", "D1:1"],
            ["Caroline was happy about Melanie's new cat.", "D1:2"],
        ],
        "Melanie": [
            ["Melanie got another cat named Bailey.", "D:1:02"],  # a typo the data has
            ["Melanie went hiking by the lake.", "D1:4"],
            ["Melanie said something nobody recorded.", "D9:9"],  # no such turn
        ],
    }
}


def _turn(speaker: str, dia_id: str, text: str) -> dict[str, str]:
    return {"speaker": speaker, "dia_id": dia_id, "text": text}


def locomo_file(path: Path) -> Path:
    sample = {
        "sample_id": "conv-t",
        "conversation": {
            "speaker_a": "Caroline",
            "speaker_b": "Melanie",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [_turn(*t) for t in TURNS],
            "session_2_date_time": "10:37 am on 27 June, 2023",
            "session_2": [_turn(*t) for t in LATER],
        },
        "observation": OBSERVED,
        "session_summary": {},
        "qa": [],
    }
    path.write_text(json.dumps([sample]), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def knowledge() -> ModuleType:
    sys.path.insert(0, str(BENCHMARKS))  # its imports of locomo_adapter and readability
    try:
        return load_benchmark("knowledge")
    finally:
        sys.path.remove(str(BENCHMARKS))


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=110
    )


def test_coverage_counts_the_annotations_the_vault_holds_for_their_speaker(
    tmp_path: Path, knowledge: ModuleType
) -> None:
    data = locomo_file(tmp_path / "tiny.json")
    vaults, out = tmp_path / "vaults", tmp_path / "out.json"
    done = run("--bench-dir", str(vaults), "--data", str(data), "--json", str(out))
    assert done.returncode == 0, done.stderr
    conv = json.loads(out.read_text(encoding="utf-8"))["conversations"]["conv-t"]
    # The facts read from D1:1 and D1:2 name Caroline and Melanie, and the jobs' observations of
    # D1:2 and D1:4 are Melanie's: three of the four annotations whose evidence is a turn; D1:2
    # holds nothing of Caroline's.
    assert (conv["annotated"], conv["matched"], conv["unresolved_annotations"]) == (4, 3, 1)
    assert conv["coverage"] == 0.75
    assert conv["evidence_any_owner"] == 1.0
    assert conv["evidence_events_in_vault"] == 1.0
    # Three facts (D2:2's clarinet too), two of them an annotation's evidence and speaker; every
    # content word of the matched statements is said ("Sweden", "cat named Bailey", "hiking by
    # the lake").
    assert (conv["facts"], conv["fact_precision"], conv["observations"]) == (3, 2 / 3, 2)
    assert conv["observation_precision"] == 1.0
    assert conv["statement_overlap"] == pytest.approx(1.0)
    missed = {m["statement"]: m["held_for_others"] for m in conv["details"]["missed"]}
    assert "fact: bailey: Melanie's cat" in missed["Caroline was happy about Melanie's new cat."]

    # An observation in a note about Caroline, linked to the cat turn, is hers; the vault
    # already there is read again, not rebuilt.
    loaded = knowledge.load(data)[0]
    cat = knowledge.turn_event_ids(loaded)["D1:2"]
    note = vaults / "conv-t" / "memory" / "long_term" / "caroline.md"
    note.write_text(
        "---\ntitle: Caroline\ntags: [person]\n---\n## Observations\n"
        f"- Was happy about the new cat. ([[#^{cat}]])\n"
        f"- Someone else said so. ^{cat}\n",
        encoding="utf-8",
    )
    assert run("--bench-dir", str(vaults), "--data", str(data), "--json", str(out)).returncode == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    conv = result["conversations"]["conv-t"]
    assert (conv["matched"], conv["coverage"], conv["observations"]) == (4, 1.0, 4)
    assert conv["observations_with_event_block_id"] == 1
    assert conv["observation_precision"] == 1.0
    assert conv["statement_overlap"] == pytest.approx(1.0)  # "happy", "new", "cat"
    assert result["overall"]["coverage"] == 1.0


def test_a_file_that_is_not_locomo_is_refused_in_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "notes.json"
    bad.write_text('{"hello": 1}', encoding="utf-8")
    done = run("--bench-dir", str(tmp_path / "v"), "--data", str(bad))
    assert done.returncode == 2
    assert done.stderr.strip() == f"{bad}: not a list of conversations; pass a LoCoMo-format file"
    assert not (tmp_path / "v").exists() or not any((tmp_path / "v").iterdir())


NOTE = "---\ntitle: {title}\ntags: [{tags}]\n---\n## Facts\n{facts}\n## Sources\n{sources}"
EVENT = "- 2023-05-08T13:5{i}:00 **{who}** (session 1): {text} ^{id}\n"


def test_issue30_checks_name_what_a_person_would_not_want_to_read(tmp_path: Path) -> None:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        readability = load_benchmark("readability")
    finally:
        sys.path.remove(str(BENCHMARKS))
    vault = tmp_path / "vault"
    Memory.init(vault)
    lt = vault / "memory" / "long_term"
    said = [("Caroline", "I adopted a dog."), ("Melanie", "My dog Max is old.")]
    said += [("Melanie", "I want to run a marathon next year. We drove to California.")]
    lines = {
        f"e-00000000{i:02d}": EVENT.format(i=i, who=w, text=t, id=f"e-00000000{i:02d}")
        for i, (w, t) in enumerate(said)
    }
    ids = list(lines)
    (lt / "max.md").write_text(
        NOTE.format(
            title="Max",
            tags="entity",
            facts=f"- max: Melanie's dog ({ids[1]})\n  - superseded: Caroline's dog ({ids[0]})\n",
            sources=lines[ids[0]] + lines[ids[1]],
        ),
        encoding="utf-8",
    )
    (lt / "mel.md").write_text(
        NOTE.format(title="Mel", tags="entity", facts="", sources=lines[ids[2]]), encoding="utf-8"
    )
    (lt / "calif.md").write_text(
        NOTE.format(title="Calif trip", tags="trip", facts="", sources=lines[ids[2]]),
        encoding="utf-8",
    )
    anna = lt / "anna-berg.md"  # the template's example, given a turn about someone else
    example = anna.read_text(encoding="utf-8").replace(
        "\n## Related", lines[ids[1]] + "\n## Related"
    )
    anna.write_text(example, encoding="utf-8")
    short = vault / "memory" / "short_term.md"
    text = short.read_text(encoding="utf-8")
    text = text.replace("## Facts", "- Run a marathon next year\n- Hear more about it\n\n## Facts")
    short.write_text(text, encoding="utf-8")

    found = readability.issue30_checks(vault, {"caroline", "melanie"}, [t for _, t in said])
    assert found.thin_entities == [("Max", 2), ("Mel", 1)]
    assert found.cut_name_titles == ["Calif trip", "Mel"]
    assert found.example_intruders == [("Anna Berg", ids[1])]
    assert found.cross_owner_supersessions == ["Max: max: Caroline's dog -> Melanie's dog"]
    assert found.unstated_goals == ["Goals: - Hear more about it"]
    assert found.goals == 2


def test_a_title_saying_what_someone_did_is_no_keyword_list() -> None:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        readability = load_benchmark("readability")
    finally:
        sys.path.remove(str(BENCHMARKS))
    texts = ["Joanna was hiking all day.", "The trail was so peaceful, I was hiking for hours."]
    not_topics = readability.not_topic_words(texts)
    speakers = {"joanna", "nate"}
    # A clause about a speaker says what happened, its last word a verb or not; a keyword list
    # whose part ends in one ("Trail and hiking") names no topic.
    assert "hiking" in not_topics
    assert not readability.is_bad_title("Joanna went hiking (2022-05-12)", speakers, not_topics)
    assert not readability.is_bad_title("Nate's team got second (2022-05-12)", speakers, set())
    assert readability.is_bad_title("Trail and hiking (2022-05-12)", speakers, not_topics)
