"""Adapters into the harnesses people already run (issue 12).

- :mod:`.run`: ``harness-memory run -- COMMAND``, any command as a learning task (CI jobs, scripts).
- :mod:`.claude_code`: ``harness-memory hook claude-code``, Claude Code's hook protocol.
- :mod:`.cli`: registers both commands on the ``harness-memory`` command line.

The LangGraph store is :mod:`harness_memory.integrations.langgraph` (extra ``[langgraph]``).
Nothing here is re-exported from :mod:`harness_memory`; each module imports the store lazily so
that the command line starts fast.
"""
