"""EngramDB's agent skills: ``SKILL.md`` files that teach a model, or an engineer, EngramDB's real tools and rules.

engramdb-memory/   when to recall, remember, correct and retract; review; the knowledge plane's session
                   workflow; what never to store (for a model with EngramDB's memory tools)
engramdb-records/  the knowledge plane: labels, mergeBy, relationships and the where-language
engramdb-adapter/  a native adapter for a new agent runtime on the SDK, with the conformance checklist

catalog.py      the skills this package ships (the folders above, package data in the wheel)
frontmatter.py  the front matter every skill carries: one ``key: value`` a line, name and description
targets.py      where each runtime (Claude Code, Hermes, OpenClaw, Codex) looks for skills
install.py      ``engram skills install``: idempotent, and never over a user's edited copy

Tests keep the skills true (tests/skills/): every tool, argument, command, operation and setting a
skill names exists, and every example in a skill runs against a real server.
"""
