"""What the package uses that not every Python it supports (3.9 and newer) has.

`@dataclass(frozen=True, **SLOTS)` makes a class with `__slots__` where dataclasses can (3.10 and
newer) and an ordinary one on 3.9, which behaves the same but for the memory it takes.
"""

from __future__ import annotations

import sys
from typing import Any

SLOTS: dict[str, Any] = {"slots": True} if sys.version_info >= (3, 10) else {}
