"""Evaluation and benchmark harnesses (run through ``engram bench``)."""
