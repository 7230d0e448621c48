"""Agent evals: scenarios with injected faults, graders over transcripts and host state, the runner.

The eval issue builds this package; it holds no code yet.
"""
