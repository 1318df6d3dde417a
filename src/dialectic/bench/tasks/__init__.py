"""Benchmark tasks: generated from a seed (arithmetic, word problems, Boolean logic, dates), any JSONL
dataset, or any reasoning-gym dataset (``rg:NAME``, scored by the dataset's own scorer).

An item's ``id`` is what results are stored under, so a task must produce the same items,
with the same ids, every time it is built from the same arguments (resume relies on it).
One module per kind; :mod:`.generated` lists the generated ones with their difficulty ranges.
"""

from __future__ import annotations

from dialectic.bench.tasks.arithmetic import (
    ARITHMETIC_PATTERN,
    DEFAULT_ARITHMETIC_ITEMS,
    MAX_OPERANDS,
    MIN_OPERANDS,
    OPERAND_MAX,
    arithmetic_form,
    arithmetic_task,
    eval_expression,
)
from dialectic.bench.tasks.base import (
    REASONING_GYM_PREFIX,
    TASK_NAMES,
    AnswerForm,
    Item,
    Task,
    TaskName,
    fingerprint,
    is_task_name,
)
from dialectic.bench.tasks.boolean_logic import boolean_logic_task
from dialectic.bench.tasks.dates import dates_task
from dialectic.bench.tasks.generated import (
    DEFAULT_GENERATED_ITEMS,
    GENERATED_TASKS,
    GENERATORS,
    check_difficulty,
    difficulty_help,
    generated_task,
)
from dialectic.bench.tasks.jsonl import jsonl_task
from dialectic.bench.tasks.reasoning_gym import parse_task_options, rg_task
from dialectic.bench.tasks.word_problems import word_problems_task

__all__ = [
    "ARITHMETIC_PATTERN",
    "DEFAULT_ARITHMETIC_ITEMS",
    "DEFAULT_GENERATED_ITEMS",
    "GENERATED_TASKS",
    "GENERATORS",
    "MAX_OPERANDS",
    "MIN_OPERANDS",
    "OPERAND_MAX",
    "REASONING_GYM_PREFIX",
    "TASK_NAMES",
    "AnswerForm",
    "Item",
    "Task",
    "TaskName",
    "arithmetic_form",
    "arithmetic_task",
    "boolean_logic_task",
    "check_difficulty",
    "dates_task",
    "difficulty_help",
    "eval_expression",
    "fingerprint",
    "generated_task",
    "is_task_name",
    "jsonl_task",
    "parse_task_options",
    "rg_task",
    "word_problems_task",
]
