"""Agent evals: scenarios with injected faults, graders over transcripts and host state, the runner.

    scenario.py           a scenario (YAML under scenarios/) and its expectation; loaded as pydantic-evals Cases
    execute.py            one scenario run in a child process: world, host snapshots, the agent, eval_run.json
    evidence.py           what graders read: eval_run.json, the transcript, the report
    graders/              one deterministic grader per file; judge.py is the optional LLM judge
    negative_controls.py  deliberately bad policies that must fail the graders made to catch them
    runner.py             run or re-grade scenarios; results.py the JSON report and baseline diff; junit.py; table.py

`specops eval` (cli/eval.py) is the command; evals/ci-example.yml shows a CI job.
"""
