"""agentdiff's terminal front ends: the command line and (later) the Textual app."""
