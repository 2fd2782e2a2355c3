"""The composition root: settings, the container and the command line."""
