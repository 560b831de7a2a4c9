"""``python -m engramdb.cli``: the same as the ``engram`` command."""

from engramdb.cli.entry import main

main()
