"""The agent hooks against a remote `brainiac serve --http` (docs/remote.md): with BRAINIAC_URL
set, `brainiac hook EVENT` posts the agent's event to the server's hook routes (hook_routes.py)
and prints what the server answers, as the hook would have printed it here.

Standard library only: it runs before every prompt. A server that cannot be reached, refuses the
token or answers something else harms nothing: no context, one line on stderr and exit status 1
(docs/hooks.md: a hook never blocks the person). A Stop that fails loses nothing either: the
transcript stays on this machine, and the next Stop sends it whole again.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from brainiac.interfaces import http_token

URL_VARIABLE = "BRAINIAC_URL"
TOKEN_VARIABLE = "BRAINIAC_TOKEN_FILE"
EVENTS = ("user-prompt-submit", "stop", "session-end")
# What a hook waits for the server: a prompt must not wait long on memory; a Stop sends the
# whole transcript, which takes longer on a slow link, and nothing waits on it.
PROMPT_TIMEOUT_S = 5.0
STOP_TIMEOUT_S = 30.0
_EXIT_FAILED = 1  # conventions.EXIT_HOOK_FAILED, without importing the CLI


class RemoteFailed(Exception):
    """One line for stderr: why the server gave no answer."""


def configured() -> str | None:
    """The server's base URL, or None: the hooks are local."""
    url = os.environ.get(URL_VARIABLE, "").strip()
    if not url:
        return None
    url = url.rstrip("/")
    return url.removesuffix("/mcp")  # the MCP endpoint's URL names the same server


def run(url: str, event: str, stdin: str, budget: int | None) -> int:
    """Ask the server at `url` for the hook `event`, print its answer; the exit status."""
    try:
        answer = _post(url, event, _body(event, stdin, budget))
    except RemoteFailed as exc:
        _write(sys.stderr, f"brainiac: {exc}\n")
        return _EXIT_FAILED
    stdout, stderr, code = answer.get("stdout"), answer.get("stderr"), answer.get("exit")
    if not isinstance(stdout, str) or not isinstance(stderr, list) or not isinstance(code, int):
        _write(sys.stderr, f"brainiac: {url}: the server's answer is not a hook's; nothing done\n")
        return _EXIT_FAILED
    _write(sys.stdout, stdout)
    for line in stderr:
        _write(sys.stderr, f"brainiac: {line}\n")
    return code


def _write(stream: Any, text: str) -> None:
    stream.write(text)
    stream.flush()


def _body(event: str, stdin: str, budget: int | None) -> dict[str, Any]:
    body: dict[str, Any] = {"event": stdin, "project": _project_hint(stdin)}
    if event == "user-prompt-submit":
        body["budget"] = budget
        return body
    transcript = _field(stdin, "transcript_path")
    if not transcript:
        return body  # the server says what is missing, as a local hook would
    path = Path(transcript).expanduser()
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RemoteFailed(
            f"{path}: the session transcript cannot be read ({exc.strerror or exc}); nothing "
            "sent, a later Stop sends it"
        ) from None
    body["name"] = path.name
    body["transcript"] = base64.b64encode(data).decode("ascii")
    return body


def _field(stdin: str, name: str) -> str:
    try:
        data = json.loads(stdin)
    except ValueError:
        return ""
    value = data.get(name) if isinstance(data, dict) else None
    return value if isinstance(value, str) else ""


def _project_hint(stdin: str) -> str:
    """The name of the git repository holding the agent's folder, found here where the folder
    is (projects.for_directory does the same for a local hook); "" for none."""
    cwd = _field(stdin, "cwd")
    if not cwd:
        return ""
    where = Path(os.path.abspath(os.path.expanduser(cwd)))
    for folder in (where, *where.parents):
        if folder.parent == folder:
            break
        if (folder / ".git").exists():
            return folder.name
    return ""


def _post(url: str, event: str, body: dict[str, Any]) -> dict[str, Any]:
    headers = {"Content-Type": "application/json"}
    token_file = os.environ.get(TOKEN_VARIABLE, "").strip()
    if token_file:
        try:
            token = http_token.read_token(Path(token_file).expanduser())
        except http_token.TokenFileError as exc:
            raise RemoteFailed(str(exc)) from None
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(
        f"{url}/hooks/{event}", data=json.dumps(body).encode("utf-8"), headers=headers
    )
    timeout = PROMPT_TIMEOUT_S if event == "user-prompt-submit" else STOP_TIMEOUT_S
    missed = (
        "no memory for this prompt"
        if event == "user-prompt-submit"
        else "nothing lost: a later Stop sends the transcript"
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            answer = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        if exc.code == 401:
            raise RemoteFailed(
                f"{url}: the server refused the token (401); set {TOKEN_VARIABLE} to a copy of "
                f"the server's token file; {missed}"
            ) from None
        raise RemoteFailed(
            f"{url}: the server answered {exc.code} {exc.reason}; {missed}"
        ) from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise RemoteFailed(
            f"{url}: the brainiac server cannot be reached ({reason}); {missed}"
        ) from None
    except ValueError:
        raise RemoteFailed(f"{url}: the server's answer is not JSON; {missed}") from None
    if not isinstance(answer, dict):
        raise RemoteFailed(f"{url}: the server's answer is not a hook's; {missed}")
    return answer
