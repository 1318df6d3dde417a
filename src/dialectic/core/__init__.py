"""The core: the debate's data (domain, changes), events, errors, configuration models, usage, prices,
and the file reader every input goes through."""
