"""Inbound (protocol, transports) and outbound (storage, model) adapters."""
