"""Memory that ages: decay and archival decisions, a person's marks, the sweep and use counts.

``decay`` decides (pure), ``operations`` are the service's aging operations, ``sweep`` archives
and erases one tenant on schedule, ``usage`` batches which memories recall used. The storage
queries they need are in storage/aging.py, the wire models in models/aging.py.
"""
