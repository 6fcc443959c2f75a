"""A stand-in for an OpenAI-compatible server, for tests. It is not a model.

It listens on 127.0.0.1 (an ephemeral port) in a thread and answers `POST /v1/chat/completions`
from a handler function the test supplies, so brainiac.model.llm is tested through a real HTTP
round-trip without a network or a model:

    def handler(body: dict) -> Reply:
        return "a summary"                      # 200 with a chat-completions JSON answer
        return 500, "boom"                      # that status, with that raw body
        return 200, "not json"                  # a malformed answer
        return lambda h: h.wfile.write(b"")     # write (or not) anything on the raw handler

    with StandIn(handler) as server:
        cfg = Config(llm_base_url=server.base_url, llm_model="m")
        ...
        server.requests[0].body["messages"], server.requests[0].headers.get("authorization")

A handler that must be slow waits on a threading.Event the test sets afterwards (never a sleep),
so the server thread can finish. On exit the server is shut down, closed, and every thread it
started is joined (tests/conftest.py fails a test that leaks a thread).

Import it as `from llm_standin import StandIn` (pytest puts tests/ on sys.path, as for
`from conftest import run_cli`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

Raw = Callable[[BaseHTTPRequestHandler], None]
Reply = str | tuple[int, str] | Raw
Handler = Callable[[dict[str, Any]], Reply]


@dataclass
class Received:
    """One request as the stand-in saw it; header names are lowercased."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any] = field(default_factory=dict)


def completion(content: str | None, finish_reason: str = "stop") -> str:
    """The JSON text of a chat-completions answer carrying `content`."""
    return json.dumps(
        {
            "id": "chatcmpl-standin",
            "object": "chat.completion",
            "model": "standin",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": finish_reason,
                }
            ],
        }
    )


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = True  # server_close() joins the request threads
    standin: StandIn

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up (the timeout test) makes the late write fail; that is expected.
        pass


class _RequestHandler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    def do_GET(self) -> None:
        self.server.standin.requests.append(
            Received("GET", self.path, {k.lower(): v for k, v in self.headers.items()})
        )
        self._send(404, '{"error": {"message": "not found"}}')

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = {"_raw": raw.decode("utf-8", errors="replace")}
        standin = self.server.standin
        headers = {k.lower(): v for k, v in self.headers.items()}
        standin.requests.append(Received("POST", self.path, headers, body))
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, '{"error": {"message": "not found"}}')
            return
        reply = standin.handler(body)
        if isinstance(reply, str):
            self._send(200, completion(reply))
        elif isinstance(reply, tuple):
            self._send(*reply)
        else:
            reply(self)

    def _send(self, status: int, text: str) -> None:
        data = text.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class StandIn:
    """`with StandIn(handler) as server:` an OpenAI-compatible stand-in at `server.base_url`."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.requests: list[Received] = []
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._port = 0

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:<port>/v1`; still readable after exit (the port is then closed)."""
        assert self._port, "use StandIn as a context manager"
        return f"http://127.0.0.1:{self._port}/v1"

    def __enter__(self) -> StandIn:
        server = _Server(("127.0.0.1", 0), _RequestHandler)
        server.standin = self
        self._server = server
        self._port = server.server_address[1]
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="llm-standin"
        )
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._thread.join()
        self._server.server_close()  # joins request threads still finishing
        self._server = None
        self._thread = None
