"""Evaluating finished debates: independent evaluator agents score the final solution.

``config`` reads the evaluator configuration, ``scores`` defines the criteria and the
statistics, ``evaluator`` runs the evaluators and aggregates their scores, and ``output``
renders the result as a table, JSON, CSV or Markdown.
"""
