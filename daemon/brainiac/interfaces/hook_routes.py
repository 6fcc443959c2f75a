"""The server side of the remote hooks (docs/remote.md): `brainiac hook ...` on an agent's machine
with BRAINIAC_URL set posts its event here (remote_hook.py), and gets back what the hook prints.

Plain HTTP beside the MCP endpoint, not an MCP tool call: a hook runs before every prompt, and an
MCP session costs the SDK's import on the agent's side (a few hundred milliseconds) and three
round trips (initialize, initialized, the call), where this is one POST from the standard
library. The routes sit behind the same bearer guard as the MCP endpoint (mcp_http.py).

    POST /hooks/user-prompt-submit  {"event": <the agent's JSON>, "budget": N, "project": P}
    POST /hooks/stop                {"event": ..., "project": P, "name": F, "transcript": base64}
    POST /hooks/session-end         the same
    -> 200 {"stdout": str, "stderr": [line, ...], "exit": 0 or 1}

The transcript lives on the agent's machine, so a Stop sends all of it; the server keeps a copy
per transcript in its state folder and imports it as a local Stop imports the original. The
import keeps each message once (by session, message id and text), so sending it again after every
turn adds only the new turns, and a Stop that could not reach the server loses nothing: the next
one sends the turns it missed.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import os
import re
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from brainiac.api import hooks
from brainiac.api.memory import Memory
from brainiac.core.errors import BrainiacError
from brainiac.interfaces.memory_sharing import Access

TRANSCRIPTS_DIR = "remote-transcripts"  # in the state folder: derived, like the index
MAX_BODY_BYTES = 256 * 1024 * 1024  # a transcript of years of turns, and not a disk's worth
_NAME_BAD = re.compile(r"[^A-Za-z0-9._-]")


class HookRequestError(BrainiacError):
    """A hook request that is not what remote_hook.py sends."""


def add_routes(server: MCPServer, memory: Memory, access: Access) -> None:
    """Register the hook routes on `server`'s HTTP application; `access`: the MCP tools' own
    (memory_sharing.py): a prompt's context is a read, a transcript's import a write."""

    def route(
        event: str,
        act: Callable[[dict[str, Any]], dict[str, Any]],
        holding: Callable[[], AbstractContextManager[None]],
    ) -> None:
        async def endpoint(request: Request) -> Response:
            size = int(request.headers.get("content-length") or 0)
            if size > MAX_BODY_BYTES:
                return _answer("", [f"hook {event}: the request is over {MAX_BODY_BYTES} bytes"])
            try:
                body = json.loads(await request.body())
                if not isinstance(body, dict):
                    raise ValueError("not a JSON object")
            except ValueError as exc:
                return _answer("", [f"hook {event}: the request is not JSON ({exc})"])

            def call() -> dict[str, Any]:
                with holding():
                    return act(body)

            try:
                answer = await anyio.to_thread.run_sync(call)
            except BrainiacError as exc:
                return _answer("", [str(exc)])
            return JSONResponse(answer)

        server.custom_route(f"/hooks/{event}", methods=["POST"])(endpoint)

    route("user-prompt-submit", lambda body: prompt_context(memory, body), access.reading)
    route("stop", lambda body: import_transcript(memory, body, "stop"), access.writing)
    route(
        "session-end",
        lambda body: import_transcript(memory, body, "session-end"),
        access.writing,
    )


def _answer(stdout: str, stderr: list[str], code: int = 1) -> JSONResponse:
    return JSONResponse({"stdout": stdout, "stderr": stderr, "exit": code})


def _payload(body: dict[str, Any], event: str) -> hooks.Payload:
    raw, project = body.get("event"), body.get("project")
    if not isinstance(raw, str):
        raise HookRequestError(f"hook {event}: the request has no event text")
    payload = hooks.Payload.parse(raw, event)
    return dataclasses.replace(payload, project_hint=project if isinstance(project, str) else "")


def prompt_context(memory: Memory, body: dict[str, Any]) -> dict[str, Any]:
    budget = body.get("budget")
    if budget is not None and not isinstance(budget, int):
        raise HookRequestError("hook user-prompt-submit: budget is not a whole number")
    text = hooks.prompt_context(memory, _payload(body, "user-prompt-submit"), budget)
    return {"stdout": text, "stderr": [], "exit": 0}


def import_transcript(memory: Memory, body: dict[str, Any], event: str) -> dict[str, Any]:
    payload = _payload(body, event)
    name, data = body.get("name"), body.get("transcript")
    if not payload.transcript_path:
        hooks.import_transcript(memory, payload)  # says what the event lacks, as a local hook
    if not isinstance(name, str) or not isinstance(data, str):
        raise HookRequestError(f"hook {event}: the request has no transcript")
    try:
        content = base64.b64decode(data, validate=True)
    except binascii.Error:
        raise HookRequestError(f"hook {event}: the transcript is not base64") from None
    copy = keep_copy(memory.locations.state / TRANSCRIPTS_DIR, name, content)
    report = hooks.import_transcript(
        memory, dataclasses.replace(payload, transcript_path=str(copy))
    )
    damaged = hooks.damage_messages(report)
    lines = [f"{report.new} new message(s) from {name}", *damaged]
    return {"stdout": "", "stderr": lines, "exit": 1 if damaged else 0}


def keep_copy(folder: Path, name: str, content: bytes) -> Path:
    """The server's copy of an agent's transcript, replaced whole (the agent's file only grows;
    an older copy arriving late only re-imports messages already kept)."""
    base = _NAME_BAD.sub("_", Path(name).name).lstrip(".") or "transcript.jsonl"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / base
    tmp = folder / f".{base}.{os.getpid()}.{threading.get_ident()}.tmp"
    tmp.write_bytes(content)
    os.replace(tmp, path)
    return path
