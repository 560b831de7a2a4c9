"""``engram bench versus``: EngramDB beside a peer memory system on the same LoCoMo or BEAM turns.

``corpus``        the turns and questions every system gets, as JSON
``engram_arm``    EngramDB: ``engram serve`` in its own process, the SDK as client
``mem0_arm``      Mem0 OSS, a script for an interpreter with the ``versus`` extra
``scoring``       the same-inputs check, evidence recall@k, latency percentiles
``machine_load``  the machine's load through each phase
``report``        the table, and what is unfair in each direction
``run``           the whole run, one system after the other
"""
