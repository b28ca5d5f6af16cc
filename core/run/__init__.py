"""Running cases: a case as worker jobs, the runs sent to a worker pool, the outputs scored and
diffed into one `CaseRun` value (its agent, result, diff, traces, outputs and shown repeat), and
re-scoring a cached run with no agent call. `runner.run_cases` yields cases as they finish; scoring
and diffing run in a thread, so the caller's event loop stays free while outputs pour in (a
workbench's small runs are scored on its loop, taking turns: `cpu`).

May import: `diff`, `traces`, `scoring`, `project`, `formats`, `worker` (jobs; the pool is passed in).
"""
