"""Loading a configuration: files, overrides, checks; the one call every entry point uses."""
