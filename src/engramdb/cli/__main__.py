"""``python -m engramdb.cli``: the same as the ``engram`` command."""

from engramdb.cli.main import main

main()
