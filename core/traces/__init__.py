"""The trace: what one run of a case did, per turn (model calls, tool calls, responses, errors) and
the final session, every element with its origin in a file. Built from baselines on disk
(`from_files`: EvalSet invocations, ADK results, conformance recordings) and from a worker's output
(`from_run`, which also builds the actual invocations ADK scores).

May import: `formats`, and `worker.jobs` for a run's output.
"""
