"""Every setting, `engram` command and operation is documented, and every link between the pages leads somewhere.

Each check is a function that returns what is missing, so that it can be shown to find a made-up name.
"""

from __future__ import annotations

import os
import re
import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

import pytest
import typer
from pydantic import BaseModel, SecretStr, ValidationError

from engramdb.cli.main import app
from engramdb.config import Settings
from engramdb.models.operations import OPERATIONS
from tests.docs.blocks import ROOT, pages

_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _text(name: str) -> str:
    return (ROOT / name).read_text(encoding="utf-8")


def _all_docs() -> str:
    return "\n".join(_text(name) for name in pages())


def setting_variables(model: type[BaseModel] = Settings, prefix: str = "ENGRAM_") -> dict[str, tuple[str, ...]]:
    """Every setting's environment variable -> its path in Settings (sections nest with ``__``)."""
    found: dict[str, tuple[str, ...]] = {}
    for name, field in model.model_fields.items():
        kind = field.annotation
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            found |= {v: (name, *p) for v, p in setting_variables(kind, f"{prefix}{name.upper()}__").items()}
        else:
            found[f"{prefix}{name.upper()}"] = (name,)
    return found


def undocumented_settings(variables: list[str], page: str) -> list[str]:
    """The variables that have no row of their own in ``page``."""
    return [v for v in variables if f"| `{v}` |" not in page]


def command_paths() -> list[str]:
    """Every visible command of the ``engram`` application, as typed: ``engram facts list``."""

    def walk(command: Any, path: str) -> list[str]:
        if not hasattr(command, "commands"):
            return [path]
        return [p for name, sub in command.commands.items() if not sub.hidden for p in walk(sub, f"{path} {name}")]

    return walk(typer.main.get_command(app), "engram")


def undocumented_commands(paths: list[str], text: str) -> list[str]:
    """The commands ``text`` never names (``engram records delete`` is not named by ``… delete-where``)."""
    return [p for p in paths if not re.search(re.escape(p) + r"(?![\w-])", text)]


def undocumented_operations(names: list[str], api: str) -> list[str]:
    """The operations without a row and a section of their own in docs/api.md."""
    return [n for n in names if f"| {n} |" not in api or f"### `{n}`:" not in api]


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = heading.strip().lower().replace("`", "")
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def broken_links(name: str, text: str) -> list[str]:
    """The links of page ``name`` to a file that does not exist, or to a heading it does not have."""
    broken = []
    for target in _LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        file = (ROOT / name).parent / path if path else ROOT / name
        if not file.resolve().exists():
            broken.append(target)
        elif anchor and file.suffix == ".md":
            headings = re.findall(r"^#+ (.+)$", file.read_text(encoding="utf-8"), re.MULTILINE)
            if anchor not in {slug(h) for h in headings}:
                broken.append(target)
    return broken


def test_every_setting_has_a_row_in_configuration_md() -> None:
    variables = list(setting_variables())
    assert len(variables) > 60 and "ENGRAM_RETRIEVAL__RRF_K" in variables and "ENGRAM_LLM__BASE_URL" in variables
    assert undocumented_settings(variables, _text("docs/configuration.md")) == []


def test_a_setting_missing_from_the_page_is_reported() -> None:
    page = _text("docs/configuration.md")
    assert undocumented_settings(["ENGRAM_NO_SUCH_SETTING"], page) == ["ENGRAM_NO_SUCH_SETTING"]
    without = "\n".join(line for line in page.splitlines() if "`ENGRAM_MEMORY_MB`" not in line)
    assert undocumented_settings(list(setting_variables()), without) == ["ENGRAM_MEMORY_MB"]


def test_every_setting_has_a_description() -> None:
    def bare(model: type[BaseModel]) -> list[str]:
        out = []
        for name, field in model.model_fields.items():
            if not (field.description or "").strip():
                out.append(name)
            if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
                out += [f"{name}.{n}" for n in bare(field.annotation)]
        return out

    assert bare(Settings) == []


def _probe(path: tuple[str, ...], settings: Settings) -> Any:
    value: Any = settings
    for part in path:
        value = getattr(value, part)
    return value.get_secret_value() if isinstance(value, SecretStr) else value


def _accepts_text(annotation: Any) -> bool:
    if get_origin(annotation) in (Union, types.UnionType):
        return any(_accepts_text(a) for a in get_args(annotation) if a is not type(None))
    return get_origin(annotation) is not Literal and annotation in (str, Path, SecretStr)


def test_each_documented_variable_is_the_one_settings_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    documented = re.findall(r"^\| `(ENGRAM_\w+)` \|", _text("docs/configuration.md"), re.MULTILINE)
    assert sorted(documented) == sorted(setting_variables())
    for name in [n for n in os.environ if n.startswith("ENGRAM_")]:
        monkeypatch.delenv(name)
    for variable, path in setting_variables().items():
        monkeypatch.setenv(variable, "docs-probe")  # text for a text setting; invalid for every other kind
        field = Settings.model_fields[path[0]]
        for part in path[1:]:
            assert isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel)
            field = field.annotation.model_fields[part]
        if _accepts_text(field.annotation):
            assert str(_probe(path, Settings())) == "docs-probe", variable
        else:
            with pytest.raises(ValidationError) as refused:
                Settings()
            assert [e["loc"] for e in refused.value.errors()] == [path], variable
        monkeypatch.delenv(variable)


def test_every_command_is_named_in_the_docs() -> None:
    paths = command_paths()
    assert {"engram serve", "engram facts list", "engram records delete-where", "engram hook prompt"} <= set(paths)
    assert undocumented_commands(paths, _all_docs()) == []


def test_a_command_missing_from_the_docs_is_reported() -> None:
    text = _all_docs()
    assert undocumented_commands(["engram facts frobnicate"], text) == ["engram facts frobnicate"]
    assert undocumented_commands(["engram records delete"], "`engram records delete-where`") == [
        "engram records delete"
    ]


def test_every_operation_is_in_the_api_reference_and_its_route_in_rest_md() -> None:
    names = [op.name for op in OPERATIONS]
    assert len(names) > 50
    assert undocumented_operations(names, _text("docs/api.md")) == []
    rest = _text("docs/rest.md")
    assert [op.name for op in OPERATIONS if f"| `{op.method} {op.path}` |" not in rest] == []


def test_an_operation_missing_from_the_reference_is_reported() -> None:
    api = _text("docs/api.md")
    assert undocumented_operations(["no_such_operation"], api) == ["no_such_operation"]
    first = OPERATIONS[0].name
    without = "\n".join(line for line in api.splitlines() if not line.startswith(f"### `{first}`:"))
    assert undocumented_operations([first], without) == [first]


def test_the_index_maps_every_page() -> None:
    index = _text("docs/index.md")
    linked = {target.partition("#")[0] for target in _LINK.findall(index)}
    assert sorted(p.name for p in (ROOT / "docs").glob("*.md") if p.name != "index.md") == sorted(
        name for name in linked if "/" not in name and name.endswith(".md")
    )


@pytest.mark.parametrize("name", pages())
def test_every_link_leads_to_a_page_and_heading_that_exist(name: str) -> None:
    assert broken_links(name, _text(name)) == []


def test_a_broken_link_is_reported() -> None:
    text = "[a](concepts.md#no-such-heading) [b](no-such-page.md) [c](concepts.md#trust-and-review) [d](https://x.org)"
    assert broken_links("docs/index.md", text) == ["concepts.md#no-such-heading", "no-such-page.md"]
