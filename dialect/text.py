"""Text helpers shared by the ``mhlo.sharding`` grammar and the pass-pipeline parser."""

from __future__ import annotations

import re


def split_top_level(text: str, opening: str = "({", closing: str = ")}") -> list[str]:
    """Split ``text`` at commas outside brackets, parts stripped; blank text has no parts,
    and an empty part (``a,,b``) is kept for the caller to reject.

    Raises ``ValueError("unbalanced brackets")`` when the brackets do not pair up.
    """
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in opening:
            depth += 1
        elif ch in closing:
            depth -= 1
            if depth < 0:
                raise ValueError("unbalanced brackets")
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if depth:
        raise ValueError("unbalanced brackets")
    parts.append(text[start:].strip())
    return parts if text.strip() else []


def nesting_too_deep(text: str, limit: int) -> int | None:
    """The offset in MLIR ``text`` where bracket nesting (``( [ { <``, outside string
    literals and ``//`` comments; ``->`` is an arrow) first exceeds ``limit``, or None.

    MLIR's parser and every walk over the parsed IR recurse once per level, so input
    nested thousands deep overflows a stack (a segfault in the parser); it is refused
    before parsing.
    """
    depth = 0
    for token in _NESTING_TOKENS.finditer(text):
        ch = token.group()
        if ch in "([{<":
            depth += 1
            if depth > limit:
                return token.start()
        elif ch in ")]}>":
            depth = max(depth - 1, 0)
    return None


# String literals, comments and arrows are matched whole so that their brackets do not count.
_NESTING_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|//[^\n]*|->|[()\[\]{}<>]')
