#!/usr/bin/env python3
"""SmolLM2 campers in ``negotiation`` calls with the scripted reference agent: how they end.

    .venv/bin/python scripts/llm_campers.py [--per-member N] [--max-turns N]

Starts the embedded model, plays ``cooperative`` llm campers (one per prompt style, temperature
0, ``max_tokens`` 40, no role-guard retries) and prints each call's ending, proxy, gold score
and out-of-role replies, then the totals, as Markdown. Plumbing and a baseline, not skill.
"""

from __future__ import annotations

import argparse
from collections import Counter

from sim2human.agents.scripted import reference_agent
from sim2human.llm import local
from sim2human.llm.runtime import LLMRuntime, LLMSettings
from sim2human.rollout.evaluate import evaluate
from sim2human.scenarios.catalog import get_scenario
from sim2human.simulators.base import QuirkPool
from sim2human.simulators.families import get_family
from sim2human.simulators.llm import llm_spec
from sim2human.simulators.llm_prompts import PROMPT_STYLES


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-member", type=int, default=2)
    parser.add_argument("--max-turns", type=int, default=8)
    args = parser.parse_args()
    neg = get_scenario("negotiation")
    pool = QuirkPool.of(neg)
    specs = [
        llm_spec(
            get_family("cooperative").sample(11 + k, pool, temperature=0.0),
            prompt=style,
            max_tokens=40,
            guard_retries=0,
        )
        for k, style in enumerate(PROMPT_STYLES)
    ]
    with local.local_model(n_parallel=4, ctx_per_slot=1024) as ep:
        settings = LLMSettings(endpoints={"local": ep}, cache=None, conversations=4)
        with LLMRuntime.open(settings, {"local"}) as rt:
            eps = evaluate(
                reference_agent(neg),
                specs,
                neg,
                split="heldout",
                per_member=args.per_member,
                llm=rt,
                max_turns=args.max_turns,
            )
    print("| member | ending | proxy | gold score | replies | out of role |")
    print("|---|---|---:|---:|---:|---:|")
    for e in eps:
        d = e.diagnostics
        print(
            f"| {e.simulator_id} | {e.termination.value} | {e.proxy:.2f} | {e.gold.score:.2f} "
            f"| {d.get('replies', 0):.0f} | {d.get('role_failures', 0):.0f} |"
        )
    endings = Counter(e.termination.value for e in eps)
    replies = sum(e.diagnostics.get("replies", 0) for e in eps)
    failures = sum(e.diagnostics.get("role_failures", 0) for e in eps)
    out_of_role = f"{failures:.0f} of {replies:.0f} replies out of role"
    print(f"\n{len(eps)} calls: {dict(endings)}; {out_of_role}")


if __name__ == "__main__":
    main()
