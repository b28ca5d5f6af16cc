"""The per-layer diff engine, as data: `diff_case(expected, actual)` → `CaseDiff`.

One module per layer (`requests`, `tool_calls`, `response`, `session`), the tree and word diffs
they share (`tree`, `sequence`), ADK's request normalisation, the criteria a config implies, the
divergences located in files, and `diff_case` over them all. Nothing here renders.

May import: `traces`, `scoring` (trajectory matching, ROUGE), `project`, `formats`.
"""
