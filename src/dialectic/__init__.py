"""dialectic: multi-agent LLM deliberation — agents propose, critique and refine; a judge synthesizes."""

__version__ = "0.1.0"
