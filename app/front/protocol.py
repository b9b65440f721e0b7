"""uvicorn's httptools protocol with a deadline on reading each request.

The deadline starts when the connection opens (first request) or at the first
byte of the next request on a kept-alive connection, and ends when the last
byte of the body arrives. Past it, a request the application has not answered
gets 408 and the connection is closed; the application never saw that request
(the bridge only calls it with a complete body), so nothing was stored.
A connection that opened and sent nothing is closed without an answer.

The header block is capped too: without a cap a client could stream headers
into memory until the deadline. The cap is checked on what arrives, before
the parser sees it: a header block past the cap sent in one write is refused
too (checked after parsing, the parser would already have taken it whole).
"""
from __future__ import annotations

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from app.front.responses import HARDENING_HEADERS, json_refusal
from app.jsonlog import log

MAX_HEADER_BYTES = 64 * 1024


def _refusal(status: int, code: str, message: str, default_headers) -> bytes:
    body = json_refusal(code, message)
    head = [STATUS_LINE[status]]
    for name, value in list(default_headers) + HARDENING_HEADERS + [
            (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
            (b"connection", b"close")]:
        head += [name, b": ", value, b"\r\n"]
    return b"".join(head) + b"\r\n" + body


class DeadlineProtocol(HttpToolsProtocol):
    """Set `read_timeout_seconds` on a subclass (see `with_deadline`)."""

    read_timeout_seconds: float = 10.0
    max_header_bytes: int = MAX_HEADER_BYTES

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self._read_deadline = None
        self._reading_headers = True
        self._header_bytes = 0
        self._header_tail = b""
        self._request_bytes = 0
        self._arm_read_deadline()

    def _arm_read_deadline(self) -> None:
        self._cancel_read_deadline()
        self._read_deadline = self.loop.call_later(self.read_timeout_seconds, self._read_deadline_passed)

    def _cancel_read_deadline(self) -> None:
        if self._read_deadline is not None:
            self._read_deadline.cancel()
            self._read_deadline = None

    def connection_lost(self, exc) -> None:
        self._cancel_read_deadline()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        self._request_bytes += len(data)
        if self._reading_headers:
            # Only the bytes up to the blank line that ends the header block count
            # (the rest of this write is body); the terminator may span two writes.
            seen = self._header_tail + data
            end = seen.find(b"\r\n\r\n")
            self._header_bytes += len(data) if end < 0 else max(0, end + 4 - len(self._header_tail))
            self._header_tail = seen[-3:]
            if self._header_bytes > self.max_header_bytes:
                self._refuse(431, "headers_too_large", f"the request's headers exceed {self.max_header_bytes} bytes")
                return
        super().data_received(data)
        if self._reading_headers and self._header_bytes > self.max_header_bytes and not self.transport.is_closing():
            self._refuse(431, "headers_too_large", f"the request's headers exceed {self.max_header_bytes} bytes")

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._read_deadline is None:  # the next request on a kept-alive connection
            self._arm_read_deadline()

    def on_headers_complete(self) -> None:
        self._reading_headers = False
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        # Cancelled before the parent's early return (a request already
        # answered, e.g. 413, whose remaining body was read and dropped).
        self._cancel_read_deadline()
        self._reading_headers = True
        self._header_bytes = 0
        self._header_tail = b""
        self._request_bytes = 0
        super().on_message_complete()

    def _read_deadline_passed(self) -> None:
        self._read_deadline = None
        if self.transport.is_closing():
            return
        cycle = self.cycle
        answered = cycle is not None and cycle.response_started and not self._reading_headers
        if self._request_bytes == 0 or answered:
            # Nothing was asked, or the answer is out (the client keeps sending
            # a body the application refused): just hang up.
            self.transport.close()
            return
        log("http.request_read_timeout", level="warning", path=self.scope.get("path") if self.scope else None,
            bytesReceived=self._request_bytes, stage="headers" if self._reading_headers else "body")
        self._refuse(408, "request_timeout",
                     f"the request was not received within {self.read_timeout_seconds:g} s; send it again faster")

    def _refuse(self, status: int, code: str, message: str) -> None:
        if self.cycle is not None and not self.cycle.response_complete:
            self.cycle.disconnected = True  # the bridge stops waiting and never calls the application
            self.cycle.message_event.set()
        self.transport.write(_refusal(status, code, message, self.server_state.default_headers))
        self.transport.close()


def with_deadline(read_timeout_seconds: float) -> type[DeadlineProtocol]:
    """A protocol class with this read deadline (uvicorn instantiates the class per connection)."""
    return type("DeadlineProtocolConfigured", (DeadlineProtocol,), {"read_timeout_seconds": read_timeout_seconds})
