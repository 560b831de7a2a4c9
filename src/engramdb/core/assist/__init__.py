"""Model-assisted memory: extraction, conflict judgement, reflection and consolidation.

Nothing here runs on a write's path: an episode write at most queues a job (same transaction),
and the model's work happens in the queue's workers or in a request that asked for it. Every
fact a model proposes goes through ``core.facts`` as origin ``derived``, so tombstones, the age
guard, one current value per slot and the trust policy hold for it as for any fact.
"""
