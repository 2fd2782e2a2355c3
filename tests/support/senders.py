"""Who sent a message on the wire, as the validators name it: the side that sends the
request (a response comes from the other side)."""

CLIENT, AGENT = "client", "agent"
