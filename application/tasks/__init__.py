"""Background tasks: commands that outlive a turn (background_tasks.py) and the model's
tools for them (task_tools.py)."""
