"""EngramDB as Hermes Agent's memory provider (hermes-agent, pinned in the ``hermes`` extra).

config.py    the provider's settings: $HERMES_HOME/engramdb/config.json and ENGRAM_* variables
provider.py  ``EngramMemoryProvider``, Hermes' ``MemoryProvider`` over ``MemorySession``
install.py   ``engram hermes install``: the plugin folder $HERMES_HOME/plugins/engramdb/
"""
