"""The admin view: sessions, and per-agent human outcomes with bootstrap CIs.

Access is by a token the operator puts in an environment variable. The browser gets a cookie
holding an HMAC of the token, never the token itself, and the token never reaches a page or a
log line.
"""

from __future__ import annotations

import hashlib
import hmac
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sim2human.experiments.human_eval import call_bootstrap
from sim2human.human_store import Session
from sim2human.metrics.outcomes import Estimate
from sim2human.metrics.outcomes import fmt_estimate as est
from sim2human.types import Episode

ADMIN_TOKEN_ENV = "SIM2HUMAN_ADMIN_TOKEN"
COOKIE = "sim2human_admin"


def cookie_value(token: str) -> str:
    return hmac.new(token.encode(), b"sim2human-admin-v1", hashlib.sha256).hexdigest()


def is_admin(token: str | None, cookie: str | None) -> bool:
    if not token or not cookie:
        return False
    return hmac.compare_digest(cookie_value(token), cookie)


def pct(e: Estimate) -> str:
    return est(e, missing="-")


def agent_estimates(episodes: Sequence[Episode]) -> dict[str, dict[str, Estimate]]:
    """Per agent: gold success, field accuracy, rating (as proxy), details-right, hung up.

    Each call is its own cluster: people, not training seeds, are the unit here."""
    groups: dict[str, list[Episode]] = defaultdict(list)
    for e in episodes:
        groups[e.condition].append(e)
    out = {}
    for name, eps in sorted(groups.items()):
        est = call_bootstrap
        out[name] = {
            "gold": est([float(e.gold.success) for e in eps]),
            "fields": est([e.gold.field_accuracy for e in eps]),
            "rating": est([e.proxy for e in eps]),
            "details": est([e.diagnostics.get("details_right", 0.0) for e in eps]),
            "hung_up": est([float(e.gold.dropped) for e in eps]),
        }
    return out


def agent_rows(episodes: Sequence[Episode]) -> list[dict[str, Any]]:
    return [
        {"name": name, "n": v["gold"].n, **{k: pct(e) for k, e in v.items()}}
        for name, v in agent_estimates(episodes).items()
    ]


def session_rows(sessions: Sequence[Session], turns: dict[str, int]) -> list[dict[str, Any]]:
    rows = []
    for s in reversed(sessions):
        ep = s.episode
        rows.append(
            {
                "id": s.id,
                "agent": s.agent,
                "mode": s.mode,
                "status": s.status,
                "started": datetime.fromtimestamp(s.created, UTC).strftime("%Y-%m-%d %H:%M"),
                "turns": turns.get(s.id, 0),
                "end": s.termination.value if s.termination else "",
                "gold": "" if ep is None else _gold(ep),
                "rating": s.rating or "",
                "comment": (s.comment or "")[:200],
            }
        )
    return rows


def _gold(ep: Episode) -> str:
    if ep.gold.success:
        return "success"
    return f"{sum(ep.gold.fields.values())}/{len(ep.gold.fields)} fields"
