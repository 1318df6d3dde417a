"""``python -m dialectic``: the command line, as the ``dialectic`` command runs it."""

from dialectic.cli.app import main

main()
