"""``engram skills install`` puts each skill where its runtime finds it, idempotently, and never over a
copy its user edited without ``--force``. Every run is an ``engram`` process in a temporary home
(``HOME``, and ``HERMES_HOME`` or ``OPENCLAW_STATE_DIR`` where the runtime reads one): never the
real user's folders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engramdb.skills import catalog
from engramdb.skills.install import MANIFEST
from tests.skills.formats import FORMATS
from tests.skills.home import MOVED_BY, engram

# Where each runtime's documentation or code says it finds a user's skills, under the home.
USER_FOLDERS = {
    "claude-code": ".claude/skills",
    "hermes": ".hermes/skills",
    "openclaw": ".openclaw/skills",
    "codex": ".agents/skills",
}
PROJECT_FOLDERS = {"claude-code": ".claude/skills", "openclaw": "skills", "codex": ".agents/skills"}


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home


@pytest.mark.parametrize("target", sorted(USER_FOLDERS))
def test_each_skill_goes_where_the_runtime_finds_a_users_skills(target: str, tmp_path: Path) -> None:
    home = _home(tmp_path)
    done = engram(home, "skills", "install", "--target", target)
    assert done.returncode == 0, done.stderr
    for skill in catalog.shipped():
        path = home / USER_FOLDERS[target] / skill.name / "SKILL.md"
        assert f"{skill.name}: installed: {path}" in done.stdout
        assert path.read_bytes() == skill.content
        assert FORMATS[target](path.read_text(encoding="utf-8"), path.parent.name) == []
        # Beside it only the manifest, a hidden file (Codex skips hidden files; the others read SKILL.md).
        assert sorted(p.name for p in path.parent.iterdir()) == [MANIFEST, "SKILL.md"]
    assert sorted(p.name for p in (home / USER_FOLDERS[target]).iterdir()) == catalog.names()


@pytest.mark.parametrize("target", sorted(MOVED_BY))
def test_the_runtimes_own_variable_moves_its_folder(target: str, tmp_path: Path) -> None:
    home = _home(tmp_path)
    moved = tmp_path / "elsewhere"
    done = engram(home, "skills", "install", "--target", target, env={MOVED_BY[target]: str(moved)})
    assert done.returncode == 0, done.stderr
    assert (moved / "skills" / "engramdb-memory" / "SKILL.md").is_file()
    assert not (home / USER_FOLDERS[target]).exists()  # the positive control of the home case above


@pytest.mark.parametrize("target", sorted(PROJECT_FOLDERS))
def test_project_installs_go_under_the_current_directory(target: str, tmp_path: Path) -> None:
    home, project = _home(tmp_path), tmp_path / "project"
    project.mkdir()
    done = engram(home, "skills", "install", "--target", target, "--project", cwd=project)
    assert done.returncode == 0, done.stderr
    assert (project / PROJECT_FOLDERS[target] / "engramdb-records" / "SKILL.md").is_file()
    assert not (home / USER_FOLDERS[target]).exists()


def test_hermes_has_no_project_folder_and_dir_overrides_any_target(tmp_path: Path) -> None:
    home = _home(tmp_path)
    refused = engram(home, "skills", "install", "--target", "hermes", "--project")
    assert refused.returncode == 1 and "Hermes Agent has no project skills folder: use --dir" in refused.stderr
    chosen = tmp_path / "chosen"
    done = engram(home, "skills", "install", "--target", "hermes", "--dir", str(chosen), "--skill", "engramdb-memory")
    assert done.returncode == 0, done.stderr
    assert [p.name for p in chosen.iterdir()] == ["engramdb-memory"]  # --skill: only that one
    assert not (home / ".hermes").exists()
    unknown = engram(home, "skills", "install", "--target", "vim")
    assert unknown.returncode == 1 and "no target 'vim'; the targets are: claude-code, hermes" in unknown.stderr


def test_installing_again_writes_nothing_and_says_so(tmp_path: Path) -> None:
    home = _home(tmp_path)
    assert engram(home, "skills", "install", "--target", "claude-code").returncode == 0
    folder = home / USER_FOLDERS["claude-code"]
    before = {p: p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()}
    again = engram(home, "skills", "install", "--target", "claude-code")
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("up to date (nothing written)") == len(catalog.names())
    assert {p: p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()} == before


def test_an_edited_copy_is_kept_unless_forced(tmp_path: Path) -> None:
    home = _home(tmp_path)
    assert engram(home, "skills", "install", "--target", "codex").returncode == 0
    edited = home / USER_FOLDERS["codex"] / "engramdb-memory" / "SKILL.md"
    edited.write_text(edited.read_text(encoding="utf-8") + "\nAlways answer in French.\n", encoding="utf-8")
    kept = engram(home, "skills", "install", "--target", "codex")
    assert kept.returncode == 1
    assert f"engramdb-memory: kept: edited since it was installed (--force overwrites it): {edited}" in kept.stdout
    assert "engramdb-records: up to date" in kept.stdout  # the others are still looked after
    assert edited.read_text(encoding="utf-8").endswith("Always answer in French.\n")
    forced = engram(home, "skills", "install", "--target", "codex", "--force")
    assert forced.returncode == 0 and "engramdb-memory: replaced an edited copy (--force)" in forced.stdout
    assert edited.read_bytes() == catalog.load("engramdb-memory").content


def test_a_file_the_user_wrote_is_kept_and_an_older_copy_of_ours_is_updated(tmp_path: Path) -> None:
    home = _home(tmp_path)
    root = home / USER_FOLDERS["openclaw"]
    theirs = root / "engramdb-records" / "SKILL.md"  # no manifest: not ours
    theirs.parent.mkdir(parents=True)
    theirs.write_text("---\nname: engramdb-records\ndescription: my own\n---\n", encoding="utf-8")
    older = root / "engramdb-memory" / "SKILL.md"  # what an earlier version installed, untouched since
    older.parent.mkdir(parents=True)
    older.write_bytes(b"---\nname: engramdb-memory\ndescription: an older version\n---\n")
    (older.parent / MANIFEST).write_text(json.dumps({"sha256": _sha256(older.read_bytes())}), encoding="utf-8")
    done = engram(home, "skills", "install", "--target", "openclaw")
    assert done.returncode == 1
    assert "engramdb-records: kept" in done.stdout and "description: my own" in theirs.read_text(encoding="utf-8")
    assert "engramdb-memory: updated (the copy installed earlier was untouched)" in done.stdout
    assert older.read_bytes() == catalog.load("engramdb-memory").content
    manifest = json.loads((older.parent / MANIFEST).read_text(encoding="utf-8"))
    assert manifest["sha256"] == catalog.load("engramdb-memory").digest


def _sha256(content: bytes) -> str:
    import hashlib

    return hashlib.sha256(content).hexdigest()


def test_list_and_show(tmp_path: Path) -> None:
    home = _home(tmp_path)
    listed = engram(home, "skills", "list")
    assert listed.returncode == 0
    assert [line.split("\t")[0] for line in listed.stdout.splitlines()] == catalog.names()
    assert all(line.split("\t")[1] for line in listed.stdout.splitlines())
    shown = engram(home, "skills", "show", "engramdb-adapter")
    assert shown.stdout == catalog.load("engramdb-adapter").text
    missing = engram(home, "skills", "show", "engramdb-nothing")
    assert missing.returncode == 1 and "no skill 'engramdb-nothing'; the skills are: engramdb-adapter" in missing.stderr
