"""One Jinja environment per package of templates, made once (HTML autoescaped, undefined names
an error): the report and the run viewer render through it."""

from __future__ import annotations

import functools

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape


@functools.cache
def template_env(package: str) -> Environment:
    """The environment of ``package``'s ``templates`` folder."""
    return Environment(
        loader=PackageLoader(package, "templates"),
        autoescape=select_autoescape(["html", "j2"]),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
