"""What the agent knows about a project on this machine: instruction files, skills, and
the environment (platform, git, the top-level listing). See LocalProjectKnowledge."""
