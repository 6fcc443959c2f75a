"""Precision and recall of `brainiac check` on LoCoMo conversations (tests/check_corpus_locomo/).

    .venv/bin/python benchmarks/check_locomo.py [--show-errors] [--limit N] [--conversations ID,...]
        [--corpus FILE.yaml]

`--corpus` checks another labelled corpus of the same schema (default
tests/check_corpus_locomo/cases.yaml), e.g. a hold-out written later: without --show-errors only
the aggregate figures are printed, none of its cases.

The corpus (written blind to the checker) holds one-sentence assistant responses about four
LoCoMo conversations, each labelled `conflict` (states a wrong value), `consistent` (states the
remembered value) or `neutral` (questions, hedges, plans, chit-chat, things never mentioned).
For each conversation a fresh vault is fed exactly as the LoCoMo benchmark does
(`locomo_adapter.BrainiacSystem`: one `Memory.remember` per turn, the memory jobs at each
session's end), then every case of that conversation goes through
`Memory.check(response, now=<the conversation's last turn>)`. A case is flagged when the report
holds at least one conflict.

    precision        = flagged conflict cases / all flagged cases
    recall           = flagged conflict cases / conflict cases
    false-flag rates = flagged consistent cases / consistent cases, and the same for neutral

are printed per conversation and in total, with the report's own verdicts counted per label
where the API offers one (a `verdict` or `status` field; otherwise its `consistent` property).

With `--llm-base-url URL --llm-model NAME` (and `--llm-api-key-env VAR` for a hosted API) each
case is also checked with the optional model (llm_check.py: the sentences the offline path left
unverified go to the model with the evidence it gathered), on the same ingested vault, and the
offline and model figures are printed side by side, with how many findings the model decided:

    .venv/bin/python benchmarks/check_locomo.py --llm-base-url http://localhost:11434/v1 \
        --llm-model llama3.1:8b

The conversations are read from `../shared/bench/locomo/` (override with --bench-dir or the
LOCOMO_DIR environment variable), never copied here (CC BY-NC 4.0). When the data file is absent
the benchmark is skipped with a message and exit status 0. `--vaults DIR` checks copies of vaults
already built in `DIR/<sample_id>/` (knowledge.py's layout) instead of fresh ones: vaults a job
or an experiment changed, e.g. with `## Observations` written into them.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from brainiac import Memory
from brainiac.store.locations import Locations
from locomo_adapter import BrainiacSystem, add_data_arguments, load_scorer

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CORPUS = REPO / "tests" / "check_corpus_locomo" / "cases.yaml"
LABELS = ("conflict", "consistent", "neutral")


@dataclass
class Tally:
    cases: Counter[str] = field(default_factory=Counter)  # label -> cases
    flagged: Counter[str] = field(default_factory=Counter)  # label -> flagged cases
    verdicts: Counter[tuple[str, str]] = field(default_factory=Counter)  # (label, verdict)

    def add(self, label: str, flagged: bool, verdict: str | None) -> None:
        self.cases[label] += 1
        self.flagged[label] += int(flagged)
        if verdict is not None:
            self.verdicts[(label, verdict)] += 1

    def merge(self, other: Tally) -> None:
        self.cases.update(other.cases)
        self.flagged.update(other.flagged)
        self.verdicts.update(other.verdicts)

    @property
    def precision(self) -> float | None:
        flagged = sum(self.flagged.values())
        return self.flagged["conflict"] / flagged if flagged else None

    def rate(self, label: str) -> float | None:
        return self.flagged[label] / self.cases[label] if self.cases[label] else None


def _verdict(result: Any) -> str | None:
    """The report's own verdict, if its public API offers one."""
    for name in ("verdict", "status"):
        value = getattr(result, name, None)
        if isinstance(value, str):
            return value
        if value is not None and hasattr(value, "value"):  # an Enum
            return str(value.value)
    consistent = getattr(result, "consistent", None)
    if isinstance(consistent, bool):
        return "consistent" if consistent else "not consistent"
    return None


def _conflicts(result: Any) -> tuple[Any, ...]:
    return tuple(getattr(result, "conflicts", None) or ())


def _fmt(x: float | None) -> str:
    return "  n/a" if x is None else f"{x:.3f}"


class CheckSystem(BrainiacSystem):
    """The LoCoMo adapter's vault, asked to check responses instead of building contexts."""

    def open_copy(self, conversation: Any, built: Path) -> None:
        """A copy of a vault already built for `conversation` (the `DIR/<sample_id>/` layout of
        knowledge.py and readability.py --keep), instead of feeding it again: to measure vaults
        a job or an experiment changed (e.g. with `## Observations` written into them)."""
        self._tmp = Path(tempfile.mkdtemp(prefix=f"brainiac_check_{conversation.sample_id}_"))
        vault = self._tmp / "vault"
        shutil.copytree(built, vault)
        locations = Locations(
            cache=self._tmp / "cache", state=self._tmp / "state", runtime=self._tmp / "run"
        )
        self._memory = Memory(vault, locations=locations)
        self._now = conversation.end_time
        self._memory.refresh(force=True)

    def check(self, text: str) -> Any:
        assert self._memory is not None, "ingest() first"
        return self._memory.check(text, now=self._now)

    def use_llm(self, base_url: str, model: str, key_env: str, timeout_s: float) -> None:
        """From now on, check with the model too (the vault's [llm] settings, in memory)."""
        assert self._memory is not None, "ingest() first"
        cfg = dataclasses.replace(
            self._memory.config,
            llm_base_url=base_url,
            llm_model=model,
            llm_api_key_env=key_env,
            llm_timeout_s=timeout_s,
        )
        self._memory.reconfigure(cfg)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_data_arguments(ap)
    ap.add_argument("--corpus", default=str(CORPUS), help="labelled cases (YAML)")
    ap.add_argument("--conversations", default="", help="comma list of sample ids (default: all)")
    ap.add_argument("--limit", type=int, default=0, help="first N cases only (smoke runs)")
    ap.add_argument(
        "--vaults",
        default="",
        help="check copies of the vaults in DIR/<sample_id>/ instead of feeding fresh ones",
    )
    ap.add_argument(
        "--llm-base-url", default="", help="also check with this OpenAI-compatible endpoint"
    )
    ap.add_argument("--llm-model", default="", help="the model's name at --llm-base-url")
    ap.add_argument(
        "--llm-api-key-env", default="", help="environment variable holding the API key, if any"
    )
    ap.add_argument("--llm-timeout", type=float, default=60.0, help="seconds per model call")
    ap.add_argument(
        "--show-errors",
        action="store_true",
        help="print the missed conflicts and the flagged consistent/neutral cases",
    )
    args = ap.parse_args(argv)
    if bool(args.llm_base_url) != bool(args.llm_model):
        ap.error("--llm-base-url and --llm-model go together")

    cases = _corpus(Path(args.corpus), ap)  # a wrong --corpus is said before anything runs
    found = load_scorer(args, "LoCoMo check benchmark")
    if found is None:
        return 0
    locomo_eval, data = found

    wanted = {c for c in args.conversations.split(",") if c}
    if wanted:
        cases = [c for c in cases if c["conversation"] in wanted]
    if args.limit > 0:
        cases = cases[: args.limit]
    for case in cases:
        if case["label"] not in LABELS:
            ap.error(f"case {case['id']}: unknown label {case['label']!r}")

    conversations = {c.sample_id: c for c in locomo_eval.load_locomo(str(data))}
    order = list(dict.fromkeys(c["conversation"] for c in cases))
    unknown = [sid for sid in order if sid not in conversations]
    if unknown:
        ap.error(f"conversations not in {data}: {', '.join(unknown)}")

    with_llm = bool(args.llm_base_url)
    total, llm_total = Tally(), Tally()
    per_conv: dict[str, Tally] = {}
    llm_per_conv: dict[str, Tally] = {}
    errors: list[str] = []
    llm_errors: list[str] = []
    decided = Counter[str]()  # findings the model decided, by status
    seconds = {"offline": 0.0, "llm": 0.0}
    for sid in order:
        tally = per_conv[sid] = Tally()
        system = CheckSystem()
        t0 = time.perf_counter()
        mine = [c for c in cases if c["conversation"] == sid]
        try:
            if args.vaults:
                system.open_copy(conversations[sid], Path(args.vaults) / sid)
            else:
                system.ingest(conversations[sid])  # offline: the same vault for both paths
            ingest_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            _run(system, mine, tally, errors, Counter())
            seconds["offline"] += time.perf_counter() - t0
            if with_llm:
                system.use_llm(
                    args.llm_base_url, args.llm_model, args.llm_api_key_env, args.llm_timeout
                )
                t0 = time.perf_counter()
                _run(system, mine, llm_per_conv.setdefault(sid, Tally()), llm_errors, decided)
                seconds["llm"] += time.perf_counter() - t0
        finally:
            system.close()
        print(f"{sid}: ingested in {ingest_s:.1f}s, {sum(tally.cases.values())} cases checked")
        total.merge(tally)
        if with_llm:
            llm_total.merge(llm_per_conv[sid])

    print()
    print(
        "| conversation | conflict | consistent | neutral | flagged | precision | recall "
        "| false flags (consistent) | false flags (neutral) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, t in [*per_conv.items(), ("total", total)]:
        print(
            f"| {name} | {t.cases['conflict']} | {t.cases['consistent']} | {t.cases['neutral']} "
            f"| {sum(t.flagged.values())} | {_fmt(t.precision)} | {_fmt(t.rate('conflict'))} "
            f"| {_fmt(t.rate('consistent'))} | {_fmt(t.rate('neutral'))} |"
        )
    if total.verdicts:
        print()
        print("The report's verdicts, by label (total):")
        for label in LABELS:
            counts = {v: n for (lab, v), n in sorted(total.verdicts.items()) if lab == label}
            if counts:
                print(f"  {label}: " + ", ".join(f"{v} {n}" for v, n in counts.items()))
    if with_llm:
        _side_by_side(total, llm_total, decided, seconds, len(cases), args.llm_model)
    if args.show_errors and errors:
        print()
        print(f"Errors ({len(errors)}):")
        for line in errors:
            print("  " + line)
    if args.show_errors and llm_errors:
        print()
        print(f"Errors with the model ({len(llm_errors)}):")
        for line in llm_errors:
            print("  " + line)
    return 0


def _corpus(path: Path, ap: argparse.ArgumentParser) -> list[dict[str, Any]]:
    """The labelled cases of `path`, or a one-line error naming the file and what to do."""
    try:
        cases = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as e:
        ap.error(f"{path}: cannot read the corpus ({e.strerror}); pass --corpus FILE.yaml")
    except yaml.YAMLError as e:
        ap.error(f"{path}: not YAML ({str(e).splitlines()[0]}); fix the file or pass another")
    fields = ("id", "conversation", "response", "label")
    if not isinstance(cases, list) or not all(
        isinstance(c, dict) and all(k in c for k in fields) for c in cases
    ):
        ap.error(f"{path}: not a list of cases with {', '.join(fields)}; see {CORPUS}")
    return cases


def _run(
    system: Any, cases: list[dict[str, Any]], tally: Tally, errors: list[str], decided: Counter[str]
) -> None:
    """Check each case, counting it in `tally`; misses and false flags go to `errors`, the
    findings the model decided (`decided_by == "llm"`) to `decided` by status."""
    for case in cases:
        result = system.check(case["response"])
        conflicts = _conflicts(result)
        flagged = bool(conflicts)
        tally.add(case["label"], flagged, _verdict(result))
        for f in getattr(result, "findings", ()):
            if getattr(f, "decided_by", "offline") == "llm":
                decided[f.status] += 1
        if flagged != (case["label"] == "conflict"):
            what = "missed" if case["label"] == "conflict" else f"flagged {case['label']}"
            detail = "; ".join(getattr(c, "correction", str(c)) for c in conflicts)
            errors.append(
                f"{case['id']} [{what}] {case['response']!r}"
                + (f"\n    -> {detail}" if detail else f"\n    truth: {case.get('truth')}")
            )


def _side_by_side(
    offline: Tally,
    llm: Tally,
    decided: Counter[str],
    seconds: dict[str, float],
    n: int,
    model: str,
) -> None:
    print()
    print(f"Offline and with the model ({model}), all conversations:")
    print()
    print(
        "| path | flagged | precision | recall | false flags (consistent) "
        "| false flags (neutral) | mean check (ms) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, t in (("offline", offline), ("llm", llm)):
        print(
            f"| {name} | {sum(t.flagged.values())} | {_fmt(t.precision)} "
            f"| {_fmt(t.rate('conflict'))} | {_fmt(t.rate('consistent'))} "
            f"| {_fmt(t.rate('neutral'))} | {1000 * seconds[name] / max(n, 1):.1f} |"
        )
    print()
    print(
        "Findings the model decided: "
        + (", ".join(f"{status} {k}" for status, k in sorted(decided.items())) or "none")
        + " (the rest stayed as the offline path judged them)"
    )


if __name__ == "__main__":
    sys.exit(main())
