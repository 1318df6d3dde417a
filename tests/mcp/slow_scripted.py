"""``python slow_scripted.py ARGS``: the dialectic command, with a scripted model that takes 0.1 s a call.

The tests that watch a debate run across processes (progress notifications, cancelling) need
it to be still running when their next request arrives: a scripted debate otherwise ends in
milliseconds. The tests never wait on a timer themselves.
"""

from __future__ import annotations

from dialectic.cli.app import main
from dialectic.llm.registry import ProviderSpec, register_provider
from dialectic.llm.scripted import ScriptedProvider

LATENCY_S = 0.1

register_provider(ProviderSpec("scripted", lambda settings: ScriptedProvider(latency_s=LATENCY_S), None))
main()
