"""What the model is told besides the conversation: the system prompt, the project's
instructions and skills (briefing.py, shared.py), its prompt commands and named agents."""
