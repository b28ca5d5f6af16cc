"""ADK's `adk test` fixtures as a family: found by their own finder (`cases`), run and judged as ADK's
test runner judges them (`judge`), accepted and re-recorded into the fixture file (`writes`)."""
