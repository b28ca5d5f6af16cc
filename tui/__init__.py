"""agentdiff's terminal front end: the command line (`cli`) and the Textual app (`app`, with its
`screens` and `widgets`). It depends on `agentdiff.core`, never the reverse.
"""
