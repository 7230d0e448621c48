"""The agent: from a one-line goal to a finished, reported job (plan, call tools, recover, report)."""
