"""``dialectic batch``: many debates on one configuration, a bounded number at a time, resumable.

:mod:`~dialectic.batch.problems` reads the problems (JSONL, ``{"id", "problem"}`` a line),
:mod:`~dialectic.batch.store` keeps each run's problems and their debates in ``batch.sqlite3``
beside the debate store (one transaction a change, so a run killed with SIGKILL loses nothing
saved), and :mod:`~dialectic.batch.runner` runs the debates through the public
:class:`dialectic.Debate` front door.
"""
