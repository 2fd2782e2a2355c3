"""The composition root, one container per role (core, storage, gateways, clients,
sessions, turn, commands, prompting, acp), assembled in application.py; see the
"composition root" section of docs/architecture.md."""
