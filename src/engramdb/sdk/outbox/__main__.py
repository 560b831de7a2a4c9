"""``python -m engramdb.sdk.outbox``: list, replay and deliver a profile's outbox.

    list    --profile DIR [--dead] [--json]   pending entries (or dead letters)
    replay  --profile DIR [SEQ ...]           move dead letters (all, or these) back to pending
    deliver --profile DIR --url URL           deliver what is pending (key from ENGRAM_KEY)

Exit status: 0 on success, 1 when ``deliver`` leaves entries undelivered, 2 on bad usage.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict
from typing import Any

from engramdb.sdk.outbox.delivery import Outbox, OutboxSettings
from engramdb.sdk.outbox.store import OutboxStore


def _row(item: Any, dead: bool) -> str:
    head = f"{item.seq}\t{item.kind}\t{item.memory_id[:12]}"
    if dead:
        return f"{head}\t{item.http_status} {item.error_code}: {item.error_message}"
    return f"{head}\tattempts={item.attempts}\t{item.last_error or ''}"


def _list(args: argparse.Namespace) -> int:
    store = OutboxStore(args.profile)
    try:
        items: list[Any] = store.dead_letters() if args.dead else store.pending()
    finally:
        store.close()
    for item in items:
        print(json.dumps(asdict(item)) if args.json else _row(item, args.dead))
    return 0


def _replay(args: argparse.Namespace) -> int:
    store = OutboxStore(args.profile)
    try:
        moved = store.replay_dead(args.seq or None)
    finally:
        store.close()
    print(f"{moved} dead letters queued again")
    return 0


def _deliver(args: argparse.Namespace) -> int:
    settings = OutboxSettings(shutdown_timeout=args.timeout)
    key = os.environ.get("ENGRAM_KEY") or os.environ.get("ENGRAM_API_KEY")
    outbox = Outbox(args.profile, url=args.url, api_key=key, settings=settings)
    delivered = outbox.close()
    store = OutboxStore(args.profile)
    try:
        left, dead = store.count(), len(store.dead_letters())
    finally:
        store.close()
    print(f"pending: {left}, dead letters: {dead}")
    return 0 if delivered else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m engramdb.sdk.outbox", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("list", help="show pending entries or dead letters")
    listing.add_argument("--dead", action="store_true", help="show the dead letters")
    listing.add_argument("--json", action="store_true", help="one JSON object per line")
    replay = commands.add_parser("replay", help="queue dead letters again")
    replay.add_argument("seq", nargs="*", type=int, help="dead-letter numbers (default: all)")
    deliver = commands.add_parser("deliver", help="deliver pending entries now")
    deliver.add_argument("--url", required=True, help="EngramDB base URL")
    deliver.add_argument("--timeout", type=float, default=10.0, help="seconds to try (default 10)")
    for sub in (listing, replay, deliver):
        sub.add_argument("--profile", required=True, help="the profile folder holding outbox.sqlite3")
    args = parser.parse_args(argv)
    handler = {"list": _list, "replay": _replay, "deliver": _deliver}[args.command]
    return handler(args)


if __name__ == "__main__":
    sys.exit(main())
