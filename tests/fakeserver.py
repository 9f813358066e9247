"""A fake OpenAI-compatible chat-completions server for tests.

:class:`FakeOpenAIServer` is a real HTTP server on ``127.0.0.1`` (a random free
port, stdlib ``ThreadingHTTPServer`` in a background thread) that answers
``POST /v1/chat/completions`` with OpenAI-shaped JSON. Its answer to a prompt
(the last user message) is deterministic: ``"echo:" + prompt``.

Faults are scripted per prompt (:meth:`FakeOpenAIServer.script` for the next
calls, :meth:`FakeOpenAIServer.always` for every call) or per global call
number (:meth:`FakeOpenAIServer.on_call`), using the :class:`Fault` factories:
HTTP errors with or without ``Retry-After``, slow responses, malformed bodies,
missing choices, empty content; :meth:`FakeOpenAIServer.gate` holds requests
until a given number are in flight. Every request is recorded (prompt, body,
headers, arrival time); the peak number of requests in flight and the number
of connections accepted are tracked, so tests can assert exactly what reached
the server.

Usage::

    with FakeOpenAIServer(api_key="sk-test") as server:
        server.script("hi", [Fault.error(429), Fault.error(500)])
        ...  # a client at server.base_url
        assert server.count("hi") == 3
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict, deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing_extensions import Self

MALFORMED_BODY = '{"id": "chatcmpl-broken", "object": "chat.completion", "choices": [{"ind'
_KEEP = object()


@dataclass(frozen=True)
class Fault:
    """How the server misbehaves on one call; build with the class methods."""

    status: int = 200
    headers: dict = field(default_factory=dict)
    body: str | None = None  # raw body replacing the normal completion JSON
    delay: float = 0.0
    content: Any = _KEEP  # message content replacing the echo (may be None)
    finish_reason: str = "stop"
    echo_auth: bool = False
    kills: bool = False  # the server dies on this call (Fault.die)

    @classmethod
    def ok(cls) -> Fault:
        """A normal answer (useful to pad a per-call script)."""
        return cls()

    @classmethod
    def error(cls, status: int, retry_after: str | float | None = None) -> Fault:
        """An HTTP error with an OpenAI-style error body, optionally with ``Retry-After``."""
        headers = {} if retry_after is None else {"Retry-After": str(retry_after)}
        body = json.dumps(
            {"error": {"message": f"fake error {status}", "type": "fake", "code": status}}
        )
        return cls(status=status, headers=headers, body=body)

    @classmethod
    def slow(cls, seconds: float) -> Fault:
        """A normal answer sent only after ``seconds``."""
        return cls(delay=seconds)

    @classmethod
    def malformed(cls) -> Fault:
        """Status 200 with a truncated, unparseable JSON body."""
        return cls(body=MALFORMED_BODY)

    @classmethod
    def no_choices(cls) -> Fault:
        """Status 200 with valid JSON that has no ``choices``."""
        return cls(body=json.dumps({"id": "chatcmpl-x", "object": "chat.completion", "model": "m"}))

    @classmethod
    def empty(cls, content: str | None = "", finish_reason: str = "length") -> Fault:
        """A well-formed completion whose content is empty (or null)."""
        return cls(content=content, finish_reason=finish_reason)

    @classmethod
    def die(cls) -> Fault:
        """The server process dies on this call: the connection closes with no answer, and
        so does every later request until :meth:`FakeOpenAIServer.revive`."""
        return cls(kills=True)

    @classmethod
    def echo_authorization(cls, status: int = 400) -> Fault:
        """An error whose body repeats the request's Authorization header, as a careless
        proxy might; a client must not copy it into its own error text."""
        return cls(status=status, echo_auth=True)


@dataclass(frozen=True)
class Received:
    """One request as the server saw it."""

    call: int
    prompt: str | None
    body: dict
    headers: dict
    time: float


class FakeOpenAIServer:
    """An OpenAI-compatible chat-completions server on ``127.0.0.1``.

    Parameters
    ----------
    api_key
        If given, requests without ``Authorization: Bearer <api_key>`` get 401.
    delay
        Seconds every request waits before it is answered.
    served_model
        The ``model`` field of answers; default: the model the request named.
    served
        A :class:`served_toys.ToyServed`: the server then also answers its completions
        and tokenize routes, in its dialect (faults by call number apply to them too).
    """

    def __init__(
        self, api_key: str | None = None, delay: float = 0.0, served_model: str | None = None,
        served=None,
    ):
        self.api_key = api_key
        self.served = served  # a tests.served_toys.ToyServed: completions and tokenize routes
        self.delay = delay
        self.served_model = served_model
        self._lock = threading.Lock()
        self._gate_changed = threading.Condition(self._lock)
        self._gate: int | None = None
        self._gate_timeout = 0.0
        self._scripts: dict[str, deque[Fault]] = defaultdict(deque)
        self._always: dict[str, Fault] = {}
        self._by_call: dict[int, Fault] = {}
        self._requests: list[Received] = []
        self._in_flight = 0
        self.max_in_flight = 0
        self.connections = 0  # TCP connections accepted (a kept-alive one serves many requests)
        self.dead = False  # after a Fault.die(): every request's connection closes unanswered
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------
    def start(self) -> Self:
        self._httpd = _HTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        """What a client's ``base_url`` should be."""
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting -------------------------------------------------------------------
    def script(self, prompt: str, faults: Iterable[Fault]) -> None:
        """Misbehave on the next calls for ``prompt``, one fault per call, then answer normally."""
        with self._lock:
            self._scripts[prompt].extend(faults)

    def always(self, prompt: str, fault: Fault | None) -> None:
        """Misbehave on every call for ``prompt`` (``None`` clears it)."""
        with self._lock:
            if fault is None:
                self._always.pop(prompt, None)
            else:
                self._always[prompt] = fault

    def on_call(self, call: int, fault: Fault) -> None:
        """Misbehave on the ``call``-th request the server receives (1-based), whatever its prompt."""
        with self._lock:
            self._by_call[call] = fault

    def gate(self, n: int, timeout: float = 5.0) -> None:
        """Hold every request until ``n`` are in flight at once, then answer them all
        (each after ``delay``), and let later ones through. A client that never sends
        ``n`` at once has its held requests released after ``timeout`` seconds. Call it
        again to hold the next ``n``. The peak in flight is then a count that does not
        depend on how fast the client's workers start."""
        with self._lock:
            self._gate, self._gate_timeout = n, timeout

    def _wait_at_gate(self) -> None:
        with self._gate_changed:
            if self._gate is None:
                return
            if self._in_flight >= self._gate:
                self._gate = None
                self._gate_changed.notify_all()
                return
            if not self._gate_changed.wait_for(lambda: self._gate is None, self._gate_timeout):
                self._gate = None  # never reached: stop holding (the test will see the peak)
                self._gate_changed.notify_all()

    def revive(self) -> None:
        """A server that died (:meth:`Fault.die`) answers again, as a restarted one would."""
        with self._lock:
            self.dead = False

    def clear(self) -> None:
        """Forget every scripted fault (the request log is kept)."""
        with self._lock:
            self._scripts.clear()
            self._always.clear()
            self._by_call.clear()

    # -- what was received -----------------------------------------------------------
    @property
    def requests(self) -> list[Received]:
        """A snapshot of every request received so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    def count(self, prompt: str | None = None) -> int:
        """Requests received in all, or for one prompt."""
        with self._lock:
            if prompt is None:
                return len(self._requests)
            return sum(r.prompt == prompt for r in self._requests)

    # -- serving ---------------------------------------------------------------------
    def _receive(self, body: dict, headers: dict) -> tuple[Received, Fault]:
        prompt = _last_user_message(body)
        with self._lock:
            call = len(self._requests) + 1
            record = Received(call, prompt, body, headers, time.monotonic())
            self._requests.append(record)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            fault = self._by_call.pop(call, None)
            if fault is None and self._scripts.get(prompt):
                fault = self._scripts[prompt].popleft()
            if fault is None:
                fault = self._always.get(prompt, Fault())
        return record, fault

    def _done(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _completion(self, record: Received, fault: Fault) -> dict:
        content = f"echo:{record.prompt}" if fault.content is _KEEP else fault.content
        prompt_tokens = len((record.prompt or "").split())
        completion_tokens = len((content or "").split())
        return {
            "id": f"chatcmpl-fake-{record.call}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.served_model or record.body.get("model"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": fault.finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    # the listen backlog (socketserver's default is 5): a client opening dozens of
    # connections at once would otherwise have some of them wait 1-2 s for a SYN retry
    request_queue_size = 1024


def _last_user_message(body: dict) -> str | None:
    for message in reversed(body.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return None


def _handler_for(server: FakeOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the openai client expects
        # TCP_NODELAY, as real servers set it: the headers and the body go out in two
        # writes, and with Nagle's algorithm the body would wait for the client's delayed
        # ACK of the headers (about 40 ms on Linux) on every request
        disable_nagle_algorithm = True

        def log_message(self, format, *args):
            pass  # keep test output clean

        def setup(self):
            super().setup()
            with server._lock:
                server.connections += 1

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            path = self.path.rstrip("/")
            if server.served is not None and path in server.served.routes:
                return self._served(path, raw)
            if not path.endswith("/chat/completions"):
                return self._send(404, {"error": {"message": f"no route {self.path}"}})
            try:
                body = json.loads(raw)
            except ValueError:
                return self._send(400, {"error": {"message": "request body is not JSON"}})
            headers = {k.lower(): v for k, v in self.headers.items()}
            record, fault = server._receive(body, headers)
            try:
                if self._died(fault):
                    return None
                server._wait_at_gate()
                time.sleep(server.delay + fault.delay)
                if (
                    server.api_key is not None
                    and headers.get("authorization") != f"Bearer {server.api_key}"
                ):
                    return self._send(401, {"error": {"message": "bad key", "code": 401}})
                if fault.echo_auth:
                    echo = {"error": {"message": f"rejected {headers.get('authorization')}"}}
                    return self._send(fault.status, echo)
                if fault.body is not None:
                    return self._send(fault.status, fault.body, fault.headers)
                return self._send(fault.status, server._completion(record, fault), fault.headers)
            finally:
                server._done()

        def _served(self, path: str, raw: bytes) -> None:
            try:
                body = json.loads(raw)
            except ValueError:
                return self._send(400, {"error": {"message": "request body is not JSON"}})
            headers = {k.lower(): v for k, v in self.headers.items()}
            record, fault = server._receive({**body, "path": path}, headers)
            try:
                if self._died(fault):
                    return None
                if server.api_key is not None and headers.get("authorization") != f"Bearer {server.api_key}":
                    return self._send(401, {"error": {"message": "bad key", "code": 401}})
                if fault.body is not None or fault.status != 200:
                    body = fault.body or {"error": {"message": "fault"}}
                    return self._send(fault.status, body, fault.headers)
                status, payload = server.served.answer(path, body)
                return self._send(status, payload)
            finally:
                server._done()

        def _died(self, fault: Fault) -> bool:
            """Whether the server is dead (this call's fault kills it, or an earlier one
            did): then the connection closes with nothing sent."""
            if fault.kills:
                with server._lock:
                    server.dead = True
            if server.dead:
                self.close_connection = True
            return server.dead

        def _send(self, status: int, payload: dict | str, headers: dict | None = None) -> None:
            data = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout, or killed): nothing to answer

    return Handler
