"""Text helpers shared by the ``mhlo.sharding`` grammar and the pass-pipeline parser."""

from __future__ import annotations


def split_top_level(text: str, opening: str = "({", closing: str = ")}") -> list[str]:
    """Split ``text`` at commas outside brackets; empty parts are dropped.

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
    return [p for p in parts if p]
