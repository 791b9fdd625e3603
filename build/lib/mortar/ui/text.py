"""What the numbers and names mean (the glossary, from the registries), and safe text for markdown."""

from __future__ import annotations

import html
import math
import re

from mortar.glossary import glossary
from mortar.vocab import LEVELS


GLOSSARY = glossary()
LEVELS_HELP = " ".join(GLOSSARY[k] for k in LEVELS)


def help_for(name: str) -> str:
    """The glossary text of a name, looked up again so methods registered after import are explained too."""
    return GLOSSARY.get(name) or glossary().get(name, "")


def md_escape(text) -> str:
    """Text safe to put inside markdown: HTML and markdown syntax characters are escaped."""
    text = html.escape(str(text), quote=False)
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|~>$])", r"\\\1", text)


def fmt(value, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)
