"""Agent hooks: what `brainiac hook EVENT` does with the JSON an agent passes on stdin.

Claude Code runs a hook command for an event and passes one JSON object on stdin; every event has
`session_id`, `transcript_path`, `cwd` and `hook_event_name`, and UserPromptSubmit adds `prompt`
(docs/hooks.md has the recipe and the sources). `cwd` names the project (docs/projects.md): the
context is scoped to it and the transcript's messages belong to it. Two events matter for memory:

- UserPromptSubmit: what the hook prints on stdout (exit status 0) is added to the model's
  context beside the prompt, so `prompt_context` returns the memory relevant to the prompt, and
  never the prompt itself: the model has it already, and a copy would spend the budget (and
  Claude Code's 10,000 characters of hook output) on what it holds twice.
- Stop (each time the agent finishes answering) and SessionEnd: `import_transcript` imports the
  session transcript. The import is de-duplicated per message, so running it after every turn
  adds only the new turns. The transcript is read live: a damaged line (cut by a crash, not
  UTF-8) is left out and reported once, and a last line still being written waits for the next
  Stop.

A hook must never block the person: in Claude Code, exit status 2 from a UserPromptSubmit hook
erases the prompt. So the CLI turns every failure here into a one-line message on stderr and exit
status 1, which Claude Code shows and otherwise ignores.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from brainiac.core.errors import BrainiacError
from brainiac.formats.events import clean_project

if TYPE_CHECKING:
    from brainiac.api.memory import Memory
    from brainiac.exchange.importer import FileReport

EVENTS = ("user-prompt-submit", "stop", "session-end")
# The characters of a prompt the hook searches with: a longer prompt (a pasted log, a file, a
# stack trace) is searched with its start and its end, half of this each. The question about a
# paste comes before it ("why does this fail?") or after it; its middle is the paste. More of it
# would not find more: the search keeps the prompt's ten rarest words that the vault holds
# (index.py, _MAX_TERMS), and a paste's words crowd the question's out of them; the sentence
# model reads the first 128 tokens (sentence_model.py). 2,000 characters keep whole what a
# person types.
SEARCH_PROMPT_CHARS = 2_000
_PARTIAL_WORD_END = re.compile(r"\S+\Z")
_PARTIAL_WORD_START = re.compile(r"\A\S+")


class HookInputError(BrainiacError):
    """The hook's stdin is not the JSON object the agent sends."""


@dataclass(frozen=True)
class Payload:
    event: str
    session_id: str
    transcript_path: str
    prompt: str
    cwd: str = ""  # where the agent works: its project (projects.for_directory)
    # A remote agent's project as its own machine found it (remote_hook.py): `cwd` is a folder
    # of that machine, which this one can match against `[projects] paths` but not search for
    # a git root.
    project_hint: str | None = None

    @classmethod
    def parse(cls, raw: str, expected: str) -> Payload:
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise HookInputError(
                f"hook {expected}: stdin is not JSON ({exc.msg} at line {exc.lineno}); "
                "run this command from an agent hook, which passes its event as JSON"
            ) from None
        if not isinstance(data, dict):
            raise HookInputError(
                f"hook {expected}: stdin is a JSON {type(data).__name__}, expected an object "
                "with session_id, transcript_path and hook_event_name"
            )

        def text(name: str) -> str:
            value = data.get(name) or ""
            if not isinstance(value, str):
                raise HookInputError(
                    f"hook {expected}: {name} is a {type(value).__name__}, expected a string"
                )
            return value

        return cls(
            text("hook_event_name"),
            text("session_id"),
            text("transcript_path"),
            text("prompt"),
            text("cwd"),
        )

    def project(self, memory: Memory) -> str | None:
        """The project of the folder the agent works in, or None (global): docs/projects.md."""
        from brainiac.store import projects

        if self.project_hint is None:
            return projects.for_directory(self.cwd, memory.config)
        where = Path(os.path.abspath(os.path.expanduser(self.cwd))) if self.cwd else None
        configured = (
            projects.configured_project(where, memory.config.project_paths) if where else None
        )
        return configured or clean_project(self.project_hint)


def prompt_context(memory: Memory, payload: Payload, budget: int | None) -> str:
    """The memory relevant to the prompt, as the context text an agent adds to it."""
    if not payload.prompt.strip():
        raise HookInputError(
            "hook user-prompt-submit: the event has no prompt; expected a UserPromptSubmit event"
        )
    return memory.context(
        search_prompt(payload.prompt),
        budget=budget,
        project=payload.project(memory),
        with_prompt=False,
    ).text


def search_prompt(prompt: str, limit: int = SEARCH_PROMPT_CHARS) -> str:
    """What of the prompt chooses its memory: all of a prompt of at most `limit` characters; of a
    longer one its start and its end, a line break between them, `limit` characters in all
    (SEARCH_PROMPT_CHARS says why), without the word cut in two at either cut: a part of a word
    is another word, or none."""
    if len(prompt) <= limit:
        return prompt
    half = (limit - 1) // 2
    head, tail = prompt[:half], prompt[-half:]
    if not prompt[half].isspace():
        head = _PARTIAL_WORD_END.sub("", head)
    if not prompt[-half - 1].isspace():
        tail = _PARTIAL_WORD_START.sub("", tail)
    return f"{head}\n{tail}"


def import_transcript(memory: Memory, payload: Payload) -> FileReport:
    """Import the session's transcript (only its new messages after the first time)."""
    if not payload.transcript_path:
        raise HookInputError(
            f"hook {payload.event or 'stop'}: the event has no transcript_path; expected a "
            "Stop or SessionEnd event from Claude Code"
        )
    path = Path(payload.transcript_path).expanduser()
    if not path.is_file():
        raise HookInputError(
            f"{path}: the session transcript does not exist (yet); nothing imported"
        )
    (report,) = memory.import_files(
        [path], format="claude-code", project=payload.project(memory), live=True
    )
    if report.error:
        raise BrainiacError(report.error)
    return report


_DAMAGE_SHOWN = 5  # a transcript damaged throughout is not listed line by line


def damage_messages(report: FileReport) -> list[str]:
    """One line per damaged line of the transcript met for the first time. Each is reported by
    the one Stop that meets it first (the import records it), not by every later one: the
    transcript is only ever appended to, so the damage stays."""
    lines = [
        f"{report.path}, {damage}; left out, as it cannot be read (the rest of the transcript is "
        "imported)"
        for damage in report.damaged[:_DAMAGE_SHOWN]
    ]
    if len(report.damaged) > _DAMAGE_SHOWN:
        more = [d.split(":", 1)[0] for d in report.damaged[_DAMAGE_SHOWN:]]
        lines.append(f"{report.path}: {len(more)} more damaged line(s) left out ({more[0]}, ...)")
    return lines
