"""The admin view: sessions, and per-agent human outcomes with bootstrap CIs.

Access is by a token the operator puts in an environment variable (at least ``MIN_TOKEN``
characters). Signing in gives the browser a random session id; the database keeps only a
keyed hash of it (HMAC under the token) with an expiry, so signing out deletes it, a changed
token ends every session, and a copied database signs nobody in. The token never reaches a page,
a cookie or a log line.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import secrets
from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sim2human.errors import UsageError
from sim2human.experiments.research.human_eval import call_bootstrap
from sim2human.metrics.outcomes import Estimate
from sim2human.metrics.outcomes import fmt_estimate as est
from sim2human.store.call_records import Session
from sim2human.types import Episode

ADMIN_TOKEN_ENV = "SIM2HUMAN_ADMIN_TOKEN"
COOKIE = "sim2human_admin"
MIN_TOKEN = 16
"""Shortest admin token accepted (characters): guessing stays hopeless even at full speed."""
SESSION_S = 12 * 3600
"""How long a sign-in lasts."""


MIN_TOKEN_BITS = 32.0
"""Least entropy of a token's characters (length times the Shannon entropy of their counts):
``aaaaaaaaaaaaaaaa`` has 0 bits and ``abab...`` 16, while every one of 10,000 random 16-digit
hex tokens measured had at least 36.8. It catches repetition, not dictionary words."""


def check_token(token: str | None) -> None:
    """A UsageError for a token too short or too repetitive to protect the admin page (unset
    or empty: off)."""
    if not token:
        return
    how = "python -c 'import secrets; print(secrets.token_urlsafe(24))'"
    if len(token) < MIN_TOKEN:
        raise UsageError(
            f"{ADMIN_TOKEN_ENV} is {len(token)} characters; use at least {MIN_TOKEN}, e.g. {how}"
        )
    if (bits := token_bits(token)) < MIN_TOKEN_BITS:
        raise UsageError(
            f"{ADMIN_TOKEN_ENV} repeats itself ({bits:.0f} bits of entropy in its characters, "
            f"at least {MIN_TOKEN_BITS:.0f} needed); use a random one, e.g. {how}"
        )


def token_bits(token: str) -> float:
    """The token's length times the Shannon entropy of its characters' counts, in bits."""
    n = len(token)
    return -n * sum(c / n * math.log2(c / n) for c in Counter(token).values())


def token_matches(token: str, given: str) -> bool:
    """Constant-time comparison (of digests, so the length leaks nothing either)."""
    digest = hashlib.sha256
    return hmac.compare_digest(digest(token.encode()).digest(), digest(given.encode()).digest())


def new_session() -> str:
    return secrets.token_urlsafe(32)


def session_key(token: str, session: str) -> str:
    """What the database stores for a sign-in: the session id keyed by the token."""
    return hmac.new(token.encode(), session.encode(), hashlib.sha256).hexdigest()


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
