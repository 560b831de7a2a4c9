"""Where each agent runtime looks for skills, as its own documentation or code says.

Each runtime finds a skill as ``<folder>/<name>/SKILL.md`` under a folder of its own:

claude-code  personal ~/.claude/skills; a project's .claude/skills. Claude Code's documentation,
             "Extend Claude with skills" (code.claude.com/docs/en/skills, "Where skills live").
hermes       $HERMES_HOME/skills, else ~/.hermes/skills; no project folder. hermes-agent 0.19.0:
             ``hermes_constants.get_skills_dir`` (get_hermes_home() / "skills"), scanned by
             ``tools.skills_tool._find_all_skills`` and ``agent.prompt_builder.build_skills_system_prompt``.
openclaw     managed skills $OPENCLAW_STATE_DIR/skills, else ~/.openclaw/skills; a workspace's
             skills folder. docs.openclaw.ai/tools/skills ("Locations and precedence"); the
             loader, src/agents/skills/workspace.ts (``managedSkillsDir = CONFIG_DIR/skills``, and
             src/utils.ts: CONFIG_DIR "can be overridden via OPENCLAW_STATE_DIR").
codex        user skills ~/.agents/skills; a repository's .agents/skills. developers.openai.com/codex/skills;
             codex-rs/core-skills/src/loader.rs (``$HOME/.agents/skills``; ``$CODEX_HOME/skills`` is
             kept there as a deprecated location).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from engramdb.errors import InvalidInputError


@dataclass(frozen=True)
class Target:
    """A runtime that loads skills: its folder for the user, and for a project (None: it has none)."""

    name: str
    runtime: str
    home_variable: str | None  # the environment variable that moves the runtime's home, if any
    home: str  # the runtime's home under the user's home, when the variable is not set
    user_skills: str  # the user's skills folder, under the runtime's home
    project_skills: str | None  # a project's (or workspace's) skills folder, under its root

    def user_folder(self, env: Mapping[str, str] = os.environ) -> Path:
        """Return the folder the runtime loads the user's skills from."""
        given = env.get(self.home_variable) if self.home_variable else None
        home = Path(given) if given else Path.home() / self.home
        return home / self.user_skills

    def project_folder(self, root: Path) -> Path:
        """Return the folder the runtime loads the skills of the project at ``root`` from."""
        if self.project_skills is None:
            raise InvalidInputError(f"{self.runtime} has no project skills folder: use --dir", field="project")
        return root / self.project_skills


TARGETS: dict[str, Target] = {
    t.name: t
    for t in (
        Target("claude-code", "Claude Code", None, ".claude", "skills", ".claude/skills"),
        Target("hermes", "Hermes Agent", "HERMES_HOME", ".hermes", "skills", None),
        Target("openclaw", "OpenClaw", "OPENCLAW_STATE_DIR", ".openclaw", "skills", "skills"),
        Target("codex", "Codex", None, ".agents", "skills", ".agents/skills"),
    )
}


def target(name: str) -> Target:
    """Return the target ``name``; InvalidInputError naming the known ones if there is none."""
    if name not in TARGETS:
        raise InvalidInputError(f"no target {name!r}; the targets are: {', '.join(TARGETS)}", field="target")
    return TARGETS[name]
