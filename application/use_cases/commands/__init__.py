"""The built-in slash commands, one small use case each, and the one that runs them."""
