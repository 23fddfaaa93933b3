"""The HTTP edge every response passes: security headers, capped requests, capped forms."""

from __future__ import annotations

from urllib.parse import parse_qs

from fastapi import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


class BodyLimit:
    """Refuse request bodies over ``limit`` bytes, by header or as they stream in."""

    def __init__(self, app: ASGIApp, limit: int, header_limit: int = 8192) -> None:
        self.app = app
        self.limit = limit
        self.header_limit = header_limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        head = sum(len(k) + len(v) for k, v in scope.get("headers", []))
        if (
            head + len(scope.get("raw_path") or b"") + len(scope["query_string"])
            > self.header_limit
        ):
            await too_large(send, 431, b"request headers too large")
            return
        length = dict(scope.get("headers", [])).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.limit):
            await too_large(send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                raise BodyTooLarge
            return message

        try:
            await self.app(scope, counted, send)
        except BodyTooLarge:
            await too_large(send)


class BodyTooLarge(Exception):
    pass


async def too_large(send: Send, status: int = 413, text: bytes = b"request too large") -> None:
    headers = [(k.lower().encode(), v.encode()) for k, v in HEADERS.items()]
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain"), *headers],
        }
    )
    await send({"type": "http.response.body", "body": text})


async def form(request: Request) -> dict[str, str]:
    """A urlencoded form (the body size is already capped by ``BodyLimit``)."""
    body = await request.body()
    try:
        parsed = parse_qs(body.decode("utf-8"), keep_blank_values=True, max_num_fields=50)
    except (UnicodeDecodeError, ValueError):
        return {}
    return {k: v[0] for k, v in parsed.items()}


def form_int(text: str | None) -> int:
    """A form's number, or -1 when it is not one (every caller treats -1 as stale or invalid)."""
    try:
        return int(text or "")
    except ValueError:
        return -1
