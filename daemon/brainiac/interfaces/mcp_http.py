"""`brainiac serve --http`: the MCP tools over the SDK's streamable HTTP transport, under uvicorn,
for agents on other machines (docs/remote.md).

Its own process over one `Memory`, as `brainiac mcp` is: beside a daemon it reads the index the
daemon keeps and writes vault files the daemon picks up; without one, it keeps the index itself.
The same server answers the remote hooks (hook_routes.py). Tools and hooks share the Memory after
the daemon's rule (memory_sharing.py): reads at once, writes one at a time beside them.

Who may call: bound to loopback without a token file, whoever reaches the port (this machine's
users); with `--token-file`, or bound to any other address (which requires one), every request
needs `Authorization: Bearer <token>`. A request without it is answered 401 with an empty body
by a guard in front of the whole application, so it reaches no tool and writes nothing. TLS is
left to a reverse proxy (docs/remote.md has a Caddy and an nginx snippet).
"""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import uvicorn
from starlette.types import ASGIApp, Receive, Scope, Send

from brainiac.api.memory import Memory
from brainiac.core.errors import BrainiacError
from brainiac.interfaces import hook_routes, http_token
from brainiac.interfaces.mcp_server import build_server
from brainiac.interfaces.memory_sharing import Shared

log = logging.getLogger(__name__)

MCP_PATH = "/mcp"
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """Stop gracefully on SIGINT and SIGTERM, then exit 0 as `brainiac run` does: uvicorn's
        own handler raises the signal again once stopped, so a clean stop would look killed."""
        previous = {sig: signal.signal(sig, self.handle_exit) for sig in _STOP_SIGNALS}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


class BearerGuard:
    """Every HTTP request carries the token or is answered 401, before the application sees it.
    The body says nothing: a caller without the token learns only that one is needed."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        header = dict(scope.get("headers") or ()).get(b"authorization")
        if http_token.authorized(header, self.token):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [(b"www-authenticate", b"Bearer"), (b"content-length", b"0")],
            }
        )
        await send({"type": "http.response.body", "body": b""})


def token_for(host: str, token_file: Path | None, say: Callable[[str], None]) -> str | None:
    """The token requests must carry (None: none), after the rules of the module docstring; `say`
    tells the person when a new token was written."""
    if token_file is None:
        if not http_token.is_loopback(host):
            raise BrainiacError(
                f"serve --http: binding {host} lets other machines in, so it needs a bearer "
                "token; add --token-file PATH (a new token is written there when it is missing)"
            )
        return None
    token, created = http_token.ensure_token(token_file)
    if created:
        say(
            f"brainiac: wrote a new token to {token_file} (mode 600); give the agents' machines "
            "a copy (docs/remote.md)"
        )
    return token


def listen(host: str, port: int) -> socket.socket:
    """The listening socket, bound before the server starts, so that a port taken is one line
    and `--port 0` (any free port) can be reported."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host.strip("[]"), port), family=family)
    except OSError as exc:
        raise BrainiacError(
            f"serve --http: cannot listen on {host}:{port} ({exc.strerror or exc}); "
            "choose another --port or --host"
        ) from None


def serve_http(
    vault: Path, host: str, port: int, token_file: Path | None, say: Callable[[str], None]
) -> None:
    """Serve `vault` over HTTP until SIGINT or SIGTERM; `say` shows the person a line (the CLI
    prints it on stderr: the only layer that prints)."""
    level = logging.getLogger().level or logging.WARNING  # the CLI's: warnings, or --debug
    logging.basicConfig(
        level=level,
        format="brainiac serve: %(levelname)s: %(name)s: %(message)s",
        stream=sys.stderr,
        force=True,
    )
    token = token_for(host, token_file, say)
    # A server alone reconciles on a thread of its own (memory_sharing.py), never in a call.
    memory = Memory(vault, refresh_interval_s=float("inf"))  # a wrong vault fails before listening
    sharing = Shared(memory)
    try:
        server = build_server(memory, sharing)
        hook_routes.add_routes(server, memory, sharing)
        app: ASGIApp = server.streamable_http_app(streamable_http_path=MCP_PATH, host=host)
        if token is not None:
            app = BearerGuard(app, token)
        sock = listen(host, port)
        bound = sock.getsockname()[1]
        shown = f"[{host.strip('[]')}]" if ":" in host else host
        guard = f"bearer token of {token_file}" if token is not None else "no token: loopback"
        say(f"brainiac: serving {memory.vault.root} at http://{shown}:{bound}{MCP_PATH} ({guard})")
        config = uvicorn.Config(
            app,
            log_level=level,
            access_log=False,
            lifespan="on",
        )
        sharing.start()
        try:
            _Server(config).run(sockets=[sock])
        finally:
            sharing.stop()
    finally:
        memory.close()
