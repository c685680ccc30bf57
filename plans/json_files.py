"""The plans' versioned JSON files (stage plans, device profiles): written, read and checked alike."""

from __future__ import annotations

import abc
import dataclasses
import json
import os
from typing import Any, ClassVar


class VersionedFile(abc.ABC):
    """A dataclass saved as JSON stamped with ``VERSION``; subclasses name themselves
    (``WHAT``, e.g. "a device profile"), give their error type and build themselves from
    the checked JSON object in ``_from_data``."""

    VERSION: ClassVar[int]
    WHAT: ClassVar[str]
    ERROR: ClassVar[type[ValueError]]

    def to_json(self) -> str:
        """The text :meth:`from_json` reads."""
        return json.dumps({"version": self.VERSION, **dataclasses.asdict(self)}, indent=1)

    def save(self, path: str | os.PathLike) -> None:
        with open(path, "w") as f:
            f.write(self.to_json())

    @classmethod
    def load(cls, path: str | os.PathLike) -> Any:
        try:
            with open(path) as f:
                text = f.read()
        except OSError as failure:
            raise cls.ERROR(f"cannot read {cls.WHAT} from {path}: {failure.strerror}") from None
        return cls.from_json(text, str(path))

    @classmethod
    def from_json(cls, text: str, where: str = "") -> Any:
        """What :meth:`save` wrote, from its text; ``where`` names it in errors."""
        where = where or f"the {cls.WHAT.split(' ', 1)[1]}"
        try:
            data = json.loads(text)
        except json.JSONDecodeError as failure:
            raise cls.ERROR(f"cannot read {cls.WHAT} from {where}: {failure}") from None
        found = data.get("version") if isinstance(data, dict) else None
        if found != cls.VERSION:
            raise cls.ERROR(f"{where}: {cls.WHAT} of version {found!r}; this alpa-mlir reads version {cls.VERSION}")
        return cls._from_data(data, where)

    @classmethod
    @abc.abstractmethod
    def _from_data(cls, data: dict[str, Any], where: str) -> Any:
        """The object from the version-checked JSON object; ``cls.ERROR`` where it is malformed."""


def json_text(data: dict[str, Any]) -> str:
    """``data`` as JSON a reader can scan: one line per top-level entry, and one line per
    element of a list of objects (a plan's arguments, results, ops), so a plan diffs line by line."""
    entries = []
    for key, value in data.items():
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            items = ",\n".join("  " + json.dumps(v) for v in value)
            entries.append(f" {json.dumps(key)}: [\n{items}\n ]")
        else:
            entries.append(f" {json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(entries) + "\n}\n"
