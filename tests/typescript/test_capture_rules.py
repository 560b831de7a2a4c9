"""The plugin's capture rules are the Python SDK's: the same pairs keep the same text (redacted,
normalised, bounded) or are refused alike."""

from __future__ import annotations

import json
import random

from engramdb.devtools.node import node
from engramdb.sdk.capture import Captured, clean_pair

PIECES = [
    "I prefer oolong in the morning.",
    "my key is sk-proj-abcdefghijklmnop1234567890",
    "token: ghp_abcdefghijklmnopqrstuvwxyz0123",
    "\nexport DATABASE_PASSWORD=hunter2hunter2\n",
    "see /home/alice/.ssh/id_rsa for it",
    "\n$ ls -la\ntotal 0\ndrwx alice\n",
    "postgres://admin:s3cr3t@db.internal/prod",
    "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\n-----END PRIVATE KEY-----",
    "\n```bash\nrm -rf build\n```\n",
    "\n```python\nprint('kept')\n```\n",
    'Traceback (most recent call last):\n  File "x.py", line 1\nValueError: boom',
    "Bearer abcdefghijklmnopqrstuvwxyz012345",
    "C:\\Users\\bob\\secrets.txt",
    "file:///etc/passwd",
    "password is 'correct horse'",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "  café\u0301 \t\r\n\r\n\r\n\r\nnext\u0007 line  ",
    "Ünïcödé 中文 text",
    "",
    "   ",
    "[redacted:path]",
]


def _pairs(rng: random.Random) -> list[tuple[str, str]]:
    pairs = []
    for _ in range(300):
        user = " ".join(rng.choice(PIECES) for _ in range(rng.randint(1, 4)))
        assistant = " ".join(rng.choice(PIECES) for _ in range(rng.randint(1, 3)))
        pairs.append((user, assistant))
    return [*pairs, ("word " * 1200, "ok then"), (PIECES[0], PIECES[0])]


def test_the_plugin_keeps_what_the_python_sdk_keeps(workspace: dict[str, str]) -> None:
    seed = random.randrange(2**32)
    pairs = _pairs(random.Random(seed))
    done = node("packages/openclaw-engramdb/test/capture-stdin.ts", input_text=json.dumps(pairs))
    assert done.returncode == 0, done.stderr
    kept = json.loads(done.stdout)
    for (user, assistant), ts in zip(pairs, kept, strict=True):
        py = clean_pair(user, assistant)
        expected = (
            {"user": py.user, "assistant": py.assistant, "summary": py.summary}
            if isinstance(py, Captured)
            else {"refused": True}
        )
        assert ts == expected, f"seed {seed}: {user!r} / {assistant!r}"
    assert any("refused" in k for k in kept) and any("[redacted:" in k.get("user", "") for k in kept)  # both kinds seen
