"""The agent loop one turn runs (the main session's, and a sub-agent's): model requests
and tool rounds until a stop reason.

- model_turn.py: ModelTurn, the loop; prepared.py: the prompt it takes.
- model_request.py: the next request (the model's view, the agent's tools), and
  system_prompts.py: what the agent is told (the port; a session's: SessionPrompt).
- reply_stream.py: one model reply streamed as it comes; provider_retry.py: waits and
  asks again after a rate limit or an outage.
- context_room.py: room in the context before a request (compaction first if needed).
- parts.py: the collaborators the loop's pieces share, grouped as they travel.
"""
