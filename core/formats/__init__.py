"""ADK's file formats as models, their loaders, and our writers.

EvalSet files and `test_config.json`, conformance cases (`spec.yaml`, recordings, session), ADK's
results files and the genai types they share; reading source files with limits, locating a value's
line, `LoadError` as data; JSON and YAML written the way ADK writes them.

May import: the standard library, pydantic, PyYAML, json-source-map. Nothing else of agentdiff.
"""
