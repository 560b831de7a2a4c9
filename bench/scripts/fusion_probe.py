"""Which fusion should recall use by default? LoCoMo turn-level evidence recall@k, per method.

Ingests every LoCoMo conversation through the production write path (one episode per turn,
`Speaker: text`, session date as observedAt) into its own scope, embeds with the default
embedder, then asks each category 1-4 question through the production recall path with each
fusion setting. The full harness (issue: retrieval quality) supersedes this probe.

    .venv/bin/python bench/scripts/fusion_probe.py --data ../shared/bench/locomo/locomo10.json
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from engramdb.config import RetrievalSettings, Settings
from engramdb.contract.canonical import hash_scope
from engramdb.contract.writes import EpisodeWrite
from engramdb.core.auth import Caller
from engramdb.core.embedding import make_embedder
from engramdb.core.service import MemoryService
from engramdb.jobs.embedding import drain
from engramdb.models.recall import RecallRequest
from engramdb.storage.registry import open_store


def _date(text: str) -> str:
    return datetime.strptime(text, "%I:%M %p on %d %B, %Y").strftime("%Y-%m-%dT%H:%M:%SZ")


def _scope(sample: str) -> dict[str, object]:
    return {
        "agentId": "locomo",
        "profileId": "eval",
        "privacyScope": "private",
        "participantScopeHash": hash_scope([sample]),
        "sandboxEligible": False,
    }


def ingest(service: MemoryService, caller: Caller, sample: dict[str, Any]) -> dict[str, str]:
    """Write one episode per turn; return dia_id -> eventId."""
    conv = sample["conversation"]
    bodies, dia_ids = [], []
    n = 1
    while f"session_{n}" in conv:
        when = _date(conv[f"session_{n}_date_time"])
        for i, turn in enumerate(conv[f"session_{n}"]):
            text = f"{turn['speaker']}: {turn['text']}"
            bodies.append(
                EpisodeWrite.model_validate(
                    {
                        **_scope(sample["sample_id"]),
                        "runtime": "custom",
                        "externalSessionId": f"s{n}",
                        "turnIndex": i,
                        "userText": text,
                        "assistantText": "",
                        "summary": text,
                        "conversationKind": "direct",
                        "visibility": "participant",
                        "trustClass": "trusted",
                        "originClass": "conversation",
                        "observedAt": when,
                        "provenance": "locomo",
                    }
                )
            )
            dia_ids.append(turn["dia_id"])
        n += 1
    results = service.writes.write_episodes(caller, bodies)
    return {r.id: d for r, d in zip(results, dia_ids, strict=True)}


def evidence(qa: dict[str, Any]) -> set[str]:
    return {p for e in qa.get("evidence", []) for p in re.split(r"[;,\s]+", e) if p}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="../shared/bench/locomo/locomo10.json")
    parser.add_argument("--embedder", default="minilm")
    args = parser.parse_args()
    data = json.loads(Path(args.data).read_text())
    home = Path(tempfile.mkdtemp())
    store = open_store(f"sqlite:///{home}")
    store.tenant("eval", create=True)
    service = MemoryService(store, make_embedder(args.embedder), Settings(home=home))
    caller = Caller(tenant="eval", key_id="probe", role="admin")
    started = time.perf_counter()
    ids = {s["sample_id"]: ingest(service, caller, s) for s in data}
    drain(store.tenant("eval"), service.shared.embedder, 128)
    print(f"ingest+embed {time.perf_counter() - started:.1f}s")
    arms = {
        "weighted 0.5, all terms": RetrievalSettings(common_term_fraction=1.0),
        "weighted 0.5, skip >20%": RetrievalSettings(common_term_fraction=0.2),
        "weighted 0.5, skip >10%": RetrievalSettings(common_term_fraction=0.1),
        "weighted 0.5, skip >5%": RetrievalSettings(common_term_fraction=0.05),
        "rrf": RetrievalSettings(fusion="rrf"),
        "weighted 0.6": RetrievalSettings(fusion="weighted", dense_weight=0.6, lexical_weight=0.4),
        "weighted 0.7": RetrievalSettings(fusion="weighted", dense_weight=0.7, lexical_weight=0.3),
        "dense only": RetrievalSettings(fusion="weighted", dense_weight=1.0, lexical_weight=0.0),
        "lexical only": RetrievalSettings(
            fusion="weighted", dense_weight=0.0, lexical_weight=1.0, common_term_fraction=1.0
        ),
    }
    for name, retrieval in arms.items():
        service.shared.settings = Settings(home=home, retrieval=retrieval)
        found = {5: 0.0, 10: 0.0}
        count = 0
        for sample in data:
            for qa in sample["qa"]:
                gold = evidence(qa)
                if qa["category"] == 5 or not gold:
                    continue
                request = RecallRequest.model_validate(
                    {"query": qa["question"], "scope": _scope(sample["sample_id"]), "limit": 10}
                )
                got = [ids[sample["sample_id"]][m.id] for m in service.reads.recall(caller, request).memories]
                for k in found:
                    found[k] += len(gold & set(got[:k])) / len(gold)
                count += 1
        print(f"{name:14s} n={count} recall@5={found[5] / count:.3f} recall@10={found[10] / count:.3f}")


if __name__ == "__main__":
    main()
