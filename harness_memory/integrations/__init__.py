"""Integrations with other frameworks; each needs its extra (``pip install 'harness-memory[langgraph]'``)."""
