"""Writing a skill where a runtime finds it: idempotent, and never over a copy its user edited.

Beside each ``SKILL.md`` it writes, ``.engramdb-skill.json`` records the SHA-256 of what was written.
Installing again then tells three cases apart: the file is this version's (nothing is written), it is
the copy written earlier and untouched since (it is updated), or it differs from what was written
(the user edited it, or wrote it: it is kept unless ``force``). Files are replaced whole (written
beside, then renamed), so a runtime never reads half a skill.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from engramdb import __version__
from engramdb.skills.catalog import SKILL_FILE, Skill

MANIFEST = ".engramdb-skill.json"
Outcome = Literal["installed", "unchanged", "updated", "kept", "replaced"]


@dataclass(frozen=True)
class Installed:
    """What installing one skill did, and where."""

    skill: str
    path: Path  # the SKILL.md
    outcome: Outcome


def install(skill: Skill, root: Path, *, force: bool = False) -> Installed:
    """Install ``skill`` as ``root/<name>/SKILL.md`` and return what was done.

    ``unchanged``: the file already holds this version (nothing written); ``installed``: there was
    none; ``updated``: it held the copy written earlier, untouched; ``kept``: it was edited since
    (or was never ours), and ``force`` is off; ``replaced``: the same, with ``force``.
    """
    folder = root / skill.name
    path = folder / SKILL_FILE
    current = path.read_bytes() if path.is_file() else None
    if current == skill.content:
        return Installed(skill.name, path, "unchanged")
    ours = current is not None and recorded(folder) == hashlib.sha256(current).hexdigest()
    if current is not None and not ours and not force:
        return Installed(skill.name, path, "kept")
    folder.mkdir(parents=True, exist_ok=True)
    _replace(path, skill.content)
    manifest = {"skill": skill.name, "sha256": skill.digest, "engramdb": __version__}
    _replace(folder / MANIFEST, (json.dumps(manifest, indent=2) + "\n").encode("utf-8"))
    return Installed(skill.name, path, "installed" if current is None else "updated" if ours else "replaced")


def recorded(folder: Path) -> str | None:
    """Return the SHA-256 the manifest in ``folder`` records, or None when there is none to read."""
    try:
        value = json.loads((folder / MANIFEST).read_text(encoding="utf-8")).get("sha256")
    except (OSError, ValueError, AttributeError):
        return None  # no manifest, or not one we wrote: the SKILL.md beside it is not known to be ours
    return value if isinstance(value, str) else None


def _replace(path: Path, content: bytes) -> None:
    spare = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    spare.write_bytes(content)
    os.replace(spare, path)
