"""Pure domain model of iac-code: sessions, turns, messages and the rules between them."""
