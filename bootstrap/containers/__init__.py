"""The composition root, one container per role (core, storage, gateways, clients,
sessions, turn, prompting, acp), assembled in application.py."""
