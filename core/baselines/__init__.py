"""Writing baselines, only ever on an explicit accept or record: documents in ADK's formats, writes
that are atomic, refused on a conflict and journaled (`journal`), live re-recording (`record`), and
accepting a run, whole or in part, after a preview (`accept`); undo.

May import: `run`, `diff`, `traces`, `scoring`, `project`, `formats`, `worker`.
"""
