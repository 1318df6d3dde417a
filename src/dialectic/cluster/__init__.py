"""Running work on a Ray cluster (extra ``[ray]``): what ``dialectic batch --ray`` and ``dialectic bench --ray``
share — joining the cluster (:mod:`.connection`), the per-endpoint limiter actors every worker's requests take
a slot from (:mod:`.limits`), and the pool of worker actors with the handling of one that died (:mod:`.workers`).

Ray is imported only when one of these runs: importing this package does not import it.
"""
