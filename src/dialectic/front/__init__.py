"""The public Python API: what ``import dialectic`` offers (see :mod:`dialectic`)."""
