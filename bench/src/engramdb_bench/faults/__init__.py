"""Fault tests as a measurement (``engram bench faults``, and tests/faults in the suite).

``kill_loop``: a real ``engram serve`` killed with SIGKILL mid-write again and again while writers
send episodes, episode batches, facts and corrections, each retried until acknowledged; then every
acknowledged write must be stored exactly once, each single-valued slot hold one current value (the
last one written) and the audit chain verify. ``sdk_flap``: a host process writing turns through
the SDK's durable outbox is killed mid-stream and restarted while the server is stopped and started
again and again; once the outbox drains, every turn must be on the server exactly once.
"""
