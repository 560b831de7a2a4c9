"""The TypeScript client's types are the server's OpenAPI document, regenerated: a drift fails here."""

from __future__ import annotations

from engramdb.devtools.typescript import SCHEMA, generated_schema


def test_the_committed_types_are_what_the_server_document_generates(workspace: dict[str, str]) -> None:
    generated = generated_schema()
    assert "/v1/recall" in generated and "EpisodeWrite" in generated  # the generator read the real document
    assert SCHEMA.read_text(encoding="utf-8") == generated, "run: python -m engramdb.devtools.typescript"
