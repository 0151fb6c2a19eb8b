"""Tool skills: programs described by a ``skill.json``, called through an adapter and scored on benchmarks.

The modules read top-down as one evaluation runs:

- ``plan``: the matrix skills x tasks x runs, every task's scorer and expectation checked before anything runs;
- ``preflight``: each skill started once and asked for what it offers, before the tasks;
- ``runner``: the asynchronous scheduler (concurrency, timeouts, retries, cancellation) that calls the adapters
  and scores each reply;
- ``aggregate``: the results of each skill summed into its report, the composite score among them;
- ``evaluation``: the one ``evaluate`` that runs the steps above, stores the results and writes the reports.

Beside them: ``discovery`` (the skills of a folder and their past evaluations: ``find``, ``history``),
``selection`` (``select``: filter and rank skills by their reports) and ``judging`` (a judge as the
``llm_judge`` scorer asks it).
"""
