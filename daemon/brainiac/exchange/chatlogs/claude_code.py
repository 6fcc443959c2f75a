"""The `claude-code` chat export format.

Claude Code's session transcript, `~/.claude/projects/<project>/<sessionId>.jsonl`: one JSON
object a line. Relied on: `type` ("user", "assistant"; "summary" and "system" reported as
Skipped with no place; "custom-title"/"ai-title" give the title; "file-history-snapshot",
"queue-operation", "progress", "attachment" and any other type ignored), `sessionId`,
`uuid` (the message id), `timestamp` (ISO-8601 with Z), `isSidechain`, `isMeta` (may be
null), `isCompactSummary` (the summary a /compact injects as a user line), `isApiErrorMessage`,
and `message.content`: a string, or a list of blocks {"type": "text", "text"},
{"type": "tool_use", "id", "name", "input"}, {"type": "tool_result", "tool_use_id",
"content"}, {"type": "thinking", "thinking", "signature"}, {"type": "image", "source"}.
One API message is written as several lines (one per content block) sharing `message.id`,
each with its own `uuid`; each line is its own record here. User lines holding only
`<command-name>`/`<local-command-stdout>`/`<bash-input>`... wrappers are slash or shell
commands ("command"); "[Request interrupted by user]" is "interrupted".
Confirmed against: daaain/claude-code-log claude_code_log/models.py (the transcript entry
models: BaseTranscriptEntry, SummaryTranscriptEntry {summary, leafUuid, no sessionId},
SystemTranscriptEntry, AiTitleTranscriptEntry {aiTitle}, the content block models);
daaain/claude-code-log test/test_data/sidechain_integrated.jsonl (isSidechain, "isMeta": null,
two lines sharing message.id) and test/test_data/minimal_showcase/
55550000-0000-4000-8000-000000000001.jsonl (tool_result-only user lines, text + tool_use);
alosec/claude-editor-hook memory-bank/03-guides/jsonl-analysis.md (file-history-snapshot and
summary lines, sidechain warmups). isCompactSummary, "custom-title" {customTitle} and the
command wrappers were seen in several public transcript readers' test fixtures.
"""

from __future__ import annotations

import re

from brainiac.exchange.chatlogs.blocks import block_text, no_text_reason
from brainiac.exchange.chatlogs.records import Node, Out, json_lines, title_of

_COMMAND_WRAPPER = re.compile(
    r"^\s*<(?:command-name|command-message|command-args|local-command-stdout|"
    r"local-command-stderr|local-command-caveat|bash-input|bash-stdout|bash-stderr)>"
)


_INTERRUPTED = re.compile(r"^\[Request interrupted by user[^\]\n]*\]$")


def parse_claude_code(file: str, stem: str, text: str, out: Out) -> None:
    records: list[tuple[str, Node]] = []
    titles: dict[str, tuple[int, str]] = {}  # session -> (rank, title): a person's beats an AI's
    session_of_uuid: dict[str, str] = {}
    first_session: str | None = None
    for lineno, value in json_lines(file, text, out):  # check every line before using any
        node = Node(file, value, "", lineno)
        node.obj()
        kind = node.req_str("type")
        session = node.opt_str("sessionId")
        if session and first_session is None:
            first_session = session
        if kind in ("user", "assistant"):
            content = node.req("message", "an object").req(
                "content", "a string or a list of content blocks"
            )
            if isinstance(content.value, list):
                block_text(content.items())
            elif not isinstance(content.value, str):
                content.wrong("a string or a list of content blocks")
            for flag in ("isSidechain", "isMeta", "isCompactSummary", "isApiErrorMessage"):
                node.flag(flag)
            node.iso_time("timestamp")
            uuid = node.opt_str("uuid")
            if uuid and session:
                session_of_uuid[uuid] = session
        elif kind in ("custom-title", "ai-title"):
            key, rank = ("customTitle", 2) if kind == "custom-title" else ("aiTitle", 1)
            title = title_of(node.opt_str(key))
            if title and session and rank >= titles.get(session, (0, ""))[0]:
                titles[session] = (rank, title)
        records.append((kind, node))

    default = first_session or stem
    places: dict[str, int] = {}
    for kind, node in records:
        session = node.opt_str("sessionId") or default
        if kind == "summary":
            leaf = node.opt_str("leafUuid") or ""
            out.skip(session_of_uuid.get(leaf, session), -1, "summary")
            continue
        if kind == "system":
            out.skip(session, -1, "system")
            continue
        if kind not in ("user", "assistant"):
            continue
        position = places.get(session, 0)
        places[session] = position + 1
        reason = _claude_code_skip(node, kind)
        if reason is not None:
            out.skip(session, position, reason)
            continue
        content = node.child("message").child("content")
        kinds: set[str] = set()
        if isinstance(content.value, str):
            said = content.value
        else:
            said, kinds = block_text(content.items())
            kinds.discard("text")
        if kind == "user" and _COMMAND_WRAPPER.match(said):
            out.skip(session, position, "command")
            continue
        if kind == "user" and _INTERRUPTED.match(said.strip()):
            out.skip(session, position, "interrupted")
            continue
        out.message(
            session,
            titles[session][1] if session in titles else None,
            position,
            node.opt_str("uuid"),
            kind,
            said,
            node.iso_time("timestamp"),
            empty_reason=no_text_reason(kinds),
        )


def _claude_code_skip(node: Node, kind: str) -> str | None:
    if node.flag("isSidechain"):
        return "sidechain"
    if node.flag("isMeta"):
        return "meta"
    if node.flag("isCompactSummary"):
        return "summary"
    if kind == "assistant" and node.flag("isApiErrorMessage"):
        return "api error"
    return None
