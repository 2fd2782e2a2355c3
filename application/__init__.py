"""Use cases of iac-code and the ports they need. Imports only `domain` and the standard library."""
