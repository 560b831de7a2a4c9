"""Headers every dashboard answer carries: a strict Content-Security-Policy and no caching of data.

Scripts, styles and images come from this server only; no inline script or style, no eval, no
frames, no form posts elsewhere. So even a stored text that escaped rendering could run nothing.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "font-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cross-origin-opener-policy": "same-origin",
}
PREFIX = "/ui"


class SecurityHeaders:
    """ASGI middleware: the headers above on ``/ui`` answers; ``no-store`` on its data parts."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or not (path == PREFIX or path.startswith(PREFIX + "/")):
            await self.app(scope, receive, send)
            return
        extra = [(k.encode(), v.encode()) for k, v in HEADERS.items()]
        if not path.startswith(f"{PREFIX}/assets/"):  # parts hold a key's data; shells stay fresh
            extra.append((b"cache-control", b"no-store"))

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, send_with_headers)
