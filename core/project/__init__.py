"""What is in a project: the cases under some paths (discovery), the agent each case runs with
(agent resolution, with what was tried when none is found), and `[tool.agentdiff]` configuration.

May import: `formats`, and `worker.jobs` for the agent reference a job carries.
"""
