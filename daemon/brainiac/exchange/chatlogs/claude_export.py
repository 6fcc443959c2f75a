"""The `claude-export` chat export format.

The text Claude Code's `/export` writes (to a file or the clipboard). It starts with the
welcome box (`╭───╮ │ ✻ Welcome to Claude Code! │ ... ╰───╯`, or since 2.x the logo
`▐▛███▜▌ Claude Code vX`), then one block per record: a prompt `> text` (`❯ text` since
2.x), continued on lines indented by two spaces; an assistant bullet `⏺ text` (`● text` on
Linux and Windows); a tool call `⏺ Tool(args)` followed by its result lines `  ⎿  ...`
(Skipped "tool use"); `✻ Thinking…` and its indented text (Skipped "thinking"); status lines
such as `✻ Brewed for 46s` (no place). A prompt that is a slash or shell command with output
(`> /login` + `⎿  Login successful`) is Skipped("command"); collapsed tool lines such as
`Read 3 files (ctrl+o to expand)` are left out of the assistant text. session = the file
name's stem; no message ids or times.
Confirmed against: public /export files found by text search (a 1.0.x export with the
welcome box, "> " prompts, "●" bullets, "⎿" results and "✻ Thinking…"; 2.1.x exports with
the logo header, "❯" prompts, "⏺" bullets, "Read 3 files (ctrl+o to expand)" and
"✻ Baked for 52s"); an export test fixture of a 2.0.76 export (multi-line tool arguments,
"/skill" lines); taehojo/vibecoding issue #55 (a 2.1.138 export) and anthropics/claude-code
issue #11375 (the /export dialog: clipboard or file).
"""

from __future__ import annotations

import re

from brainiac.exchange.chatlogs.records import Out

_CX_USER = re.compile(r"^(?:>|❯)(?: (?P<text>.*))?$")


_CX_ASSISTANT = re.compile(r"^(?:⏺|●)(?: (?P<text>.*))?$")


_CX_THINKING = re.compile(r"^(?:✻|∴) Thinking|^∴ Thought")


_CX_STATUS = re.compile(r"^[✻✽✶✳✢∴※] ")


_CX_RESULT = re.compile(r"^\s+⎿")


_CX_COLLAPSED = re.compile(r"^\s+\S.*\(ctrl\+\w to expand\)\s*$")


_CX_COMMAND = re.compile(r"^[/!]\S*")


_CX_SLASH_ONLY = re.compile(r"^/[\w:.-]+$")


def parse_claude_export(stem: str, text: str, out: Out) -> None:
    blocks: list[tuple[str, list[str]]] = []  # (kind, lines); kind: user, assistant, thinking
    current: list[str] | None = None
    for raw in text.split("\n"):
        line = raw.rstrip()
        if _CX_USER.match(line):
            current = [line]
            blocks.append(("user", current))
        elif _CX_ASSISTANT.match(line):
            current = [line]
            blocks.append(("assistant", current))
        elif _CX_THINKING.match(line):
            current = [line]
            blocks.append(("thinking", current))
        elif _CX_STATUS.match(line):
            current = None  # a status line ("✻ Brewed for 46s"): no record
        elif current is not None:
            current.append(line)
    for position, (kind, lines) in enumerate(blocks):
        if kind == "thinking":
            out.skip(stem, position, "thinking")
        elif kind == "user":
            _cx_user(stem, position, lines, out)
        else:
            _cx_assistant(stem, position, lines, out)


def _dedent(line: str) -> str:
    return line[2:] if line.startswith("  ") else line.lstrip(" ")


def _cx_user(stem: str, position: int, lines: list[str], out: Out) -> None:
    match = _CX_USER.match(lines[0])
    first = (match.group("text") if match else None) or ""
    prompt = [first]
    output = False
    for line in lines[1:]:
        if _CX_RESULT.match(line):
            output = True
            break
        prompt.append(_dedent(line))
    said = "\n".join(prompt).strip()
    if said and (
        (output and _CX_COMMAND.match(said)) or (_CX_SLASH_ONLY.match(said) and "\n" not in said)
    ):
        out.skip(stem, position, "command")
        return
    out.message(stem, None, position, None, "user", said, None)


def _cx_assistant(stem: str, position: int, lines: list[str], out: Out) -> None:
    match = _CX_ASSISTANT.match(lines[0])
    first = (match.group("text") if match else None) or ""
    if any(_CX_RESULT.match(line) for line in lines[1:]):
        out.skip(stem, position, "tool use")
        return
    body = [_dedent(line) for line in lines[1:] if not _CX_COLLAPSED.match(line)]
    said = "\n".join([first, *body]).strip()
    if _CX_SLASH_ONLY.match(said):
        out.skip(stem, position, "command")  # a skill or command the assistant ran
        return
    out.message(stem, None, position, None, "assistant", said, None)
