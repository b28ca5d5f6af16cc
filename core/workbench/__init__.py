"""The workbench: every case's current state in a UI-agnostic session. Changes to files are
classified (`changes`: re-score, run, reload or drop, each with its reason) and acted on; runs go
to the pool; accept and undo go through `baselines`; run history and triage labels are kept.

May import: every other core subpackage except `reports`. Never the TUI, Textual or Rich: the TUI
subscribes to its events.
"""
