"""``dialectic serve``: a page and a JSON API to start, watch, steer and download debates.

An entry point beside :mod:`dialectic.cli`: it imports the engine, the store and the events,
and nothing below imports it. FastAPI serves the API (documented at ``/docs``) and the static
page; every debate runs on the server's one event loop, in the same store as the CLI.
"""
