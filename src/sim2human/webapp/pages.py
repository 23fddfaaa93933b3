"""The templates (autoescaped) and the limits the pages state, shared by every router."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi.responses import HTMLResponse, RedirectResponse
from jinja2 import Environment, PackageLoader, select_autoescape

from sim2human.scenarios.voice import CardWords


@dataclass(frozen=True)
class Limits:
    max_chars: int = 1000
    """Longest message a person may send (characters)."""
    max_body: int = 16_384
    """Largest request body accepted (bytes); larger ones get 413."""
    max_header: int = 8192
    """Largest request line plus headers accepted (bytes); larger ones get 431."""
    per_minute: int = 30
    """Messages one session may send in any 60 seconds; more get 429."""
    starts_per_client: int = 20
    """New calls one client (address) may open in any 60 seconds; more get 429."""
    starts_per_visitor: int = 5
    """New calls one browser (its visitor cookie) may open in any 60 seconds; more get 429."""
    starts_per_minute: int = 600
    """New calls the whole server opens in any 60 seconds (a runaway script cannot fill the
    database; well above what one client may start); more get 429."""
    newcomer_share: float = 0.25
    """Of ``starts_per_minute``, the share kept for clients with no start in the last minute
    (150 of 600): a flood of repeat starts is refused before it reaches them (``admission``)."""

    @property
    def newcomer_reserve(self) -> int:
        """Starts a minute kept for newcomers."""
        return int(self.starts_per_minute * self.newcomer_share)

    login_backoff_s: float = 1.0
    """A wrong admin token locks that client out for this long, doubling per miss in a row."""
    login_backoff_cap_s: float = 60.0
    """The longest lockout after wrong admin tokens."""


class Pages:
    """The templates (autoescaped), each rendered as a response."""

    def __init__(self, words: CardWords) -> None:
        escape = select_autoescape(default=True, default_for_string=True)
        loader = PackageLoader("sim2human.webapp", "templates")
        self.env = Environment(loader=loader, autoescape=escape)
        self.env.globals["words"] = words
        """The scenario's words for people (``Voice.card``): every page names the setting."""

    def page(
        self, name: str, status: int = 200, headers: dict[str, str] | None = None, **ctx: Any
    ) -> HTMLResponse:
        ctx.setdefault("error", None)
        ctx.setdefault("step", None)
        html = self.env.get_template(name).render(**ctx)
        return HTMLResponse(html, status_code=status, headers=headers)

    def message(
        self, title: str, text: str, status: int, headers: dict[str, str] | None = None
    ) -> HTMLResponse:
        return self.page("message.html", status, headers, title=title, message=text)


def there(token: str, anchor: str = "") -> RedirectResponse:
    """Back to the call's page (post/redirect/get: a reload never posts twice)."""
    return RedirectResponse(f"/call/{token}{anchor}", status_code=303)
