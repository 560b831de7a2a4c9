"""The reference arm: the floor EngramDB's recall is measured against, on the same machine, in the same run.

A bare pipeline and nothing else: uvicorn with uvloop and httptools (as ``engram serve``), one
Starlette route, the same packaged all-MiniLM-L6-v2 embedder, an exact cosine top-k over the
scope's float32 matrix with numpy. No key, no lexical arm, no fusion, no features, no lifecycle
filter, no audit. ``python -m engramdb_bench.reference --port N`` serves it.
"""
