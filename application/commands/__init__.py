"""The built-in slash commands: one small use case each (a module per family), the
dispatch that runs one instead of the model, and `run.py`, which stores and shows it.
The registry of what a session offers is runtime state (application.runtime.command_registry).
"""
