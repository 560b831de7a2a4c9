"""Hermes Agent (hermes-agent 0.19.0, pinned) finds the installed skills with its own loader: its skill
list (``tools.skills_tool.skills_list``), ``skill_view`` (what the model loads) and the skills index
of its system prompt (``agent.prompt_builder.build_skills_system_prompt``), in a temporary HERMES_HOME."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from engramdb.skills import catalog
from tests.skills.home import engram

HERMES_SEES = """
import json
from agent.prompt_builder import build_skills_system_prompt
from tools.skills_tool import skill_view, skills_list

listed = {s["name"]: s["description"] for s in json.loads(skills_list())["skills"]}
viewed = {name: json.loads(skill_view(name)).get("content") for name in listed}
print(json.dumps({"listed": listed, "viewed": viewed, "prompt": build_skills_system_prompt()}))
"""


def _hermes_sees(home: Path, hermes_home: Path) -> dict[str, dict[str, str]]:
    env = {"HOME": str(home), "HERMES_HOME": str(hermes_home), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", HERMES_SEES], cwd=home, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def test_hermes_own_loader_finds_lists_and_loads_the_installed_skills(tmp_path: Path) -> None:
    home, hermes_home = tmp_path / "home", tmp_path / "hermes"
    home.mkdir()
    before = _hermes_sees(home, hermes_home)
    assert not set(before["listed"]) & set(catalog.names())  # the positive control: none before the install
    done = engram(home, "skills", "install", "--target", "hermes", env={"HERMES_HOME": str(hermes_home)})
    assert done.returncode == 0, done.stderr
    seen = _hermes_sees(home, hermes_home)
    for skill in catalog.shipped():
        assert seen["listed"][skill.name] == skill.description  # read whole: not cut, not renamed
        assert seen["viewed"][skill.name].strip() == skill.text.strip()  # what a model loads is the file
        assert skill.name in seen["prompt"]  # and the index in Hermes' system prompt names it
