"""Model-assisted memory was the ``models`` group before it was ``assist``: the old names answer
for one release (old REST paths, old SDK method names with a DeprecationWarning, the old CLI
group), each giving what its new name gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engramdb.sdk import Client
from tests.assist.test_cli_mcp import _engram
from tests.conftest import LiveServer


@pytest.fixture
def backend() -> str:
    return "sqlite"  # names on the surfaces: one backend behind them is enough


def test_the_former_rest_paths_answer_as_the_new_ones(live: LiveServer) -> None:
    with live.client(live.key(role="admin")) as admin:
        for new, old in [("/v1/assist/usage", "/v1/model-usage"), ("/v1/assist/jobs", "/v1/model-jobs")]:
            current, former = admin.get(new), admin.get(old)
            assert current.status_code == former.status_code == 200
            assert former.json().keys() == current.json().keys()
        missing = "0" * 32
        assert admin.get(f"/v1/model-jobs/{missing}").status_code == admin.get(f"/v1/assist/jobs/{missing}").status_code
        assert admin.get(f"/v1/assist/jobs/{missing}").status_code == 404
        paths = admin.get("/openapi.json").json()["paths"]
        assert "/v1/assist/usage" in paths and "/v1/model-usage" not in paths  # documented once, by its new name
        assert admin.get("/v1/model-usages").status_code == 404  # control: not every path answers


def test_the_former_sdk_names_warn_and_call_the_new_ones(live: LiveServer) -> None:
    with Client(live.url, api_key=live.key(role="admin")) as client:
        current = client.assist_usage()
        with pytest.warns(DeprecationWarning, match=r"model_usage\(\) is deprecated: use assist_usage\(\)"):
            former = client.model_usage()
        assert former.total == current.total
        with pytest.warns(DeprecationWarning, match="list_assist_jobs"):
            assert client.list_model_jobs().jobs == client.list_assist_jobs().jobs


def test_the_former_cli_group_runs_the_same_commands(tmp_path: Path) -> None:
    home = tmp_path / "data"
    assert _engram(home, "remember", "The user has a dog", "--subject", "user", "--kind", "dog").returncode == 0
    current = _engram(home, "assist", "jobs", "--json")
    former = _engram(home, "models", "jobs", "--json")
    assert current.returncode == former.returncode == 0, former.stderr
    assert json.loads(former.stdout) == json.loads(current.stdout)
    assert "'models' is deprecated" in former.stderr and "deprecated" not in current.stderr
    assert "models" not in _engram(home, "--help").stdout.split("Commands")[-1]  # hidden from the help
    assert "assist" in _engram(home, "--help").stdout
