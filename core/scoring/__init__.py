"""Scores exactly as ADK 2.13 computes them: ROUGE-1, tool trajectories, the efficiency metrics;
a run's metrics, the verdict over repeats (`flaky` when they disagree), results as data, and
re-scoring ADK's stored results files with no agent call.

May import: `formats`. Heavy imports (the NLTK stemmer) are deferred to first use.
"""
