"""Running agents in worker processes: the job and result models, the ADK and native adapters that
run inside a worker, and the pool that starts, watches and cleans up the workers.

Nothing here imports google-adk at import time: the adapters import it inside the worker, and a
forkserver started with the heavy modules preloaded hands each job a warm, fresh process.

May import: nothing else of agentdiff (its modules run inside project environments), pydantic for
the job models; only `adk_adapter` and `warm` import google-adk and genai.
"""
