"""The room for the shared session: which clients are attached to which session, who
controls it, what happens as they come and go, and the questions put to all of them.

- ownership: the rules (who may act, who controls), on any hashable peers.
- detached: the clock of a turn running with nobody attached.
- arrivals: attaches under way, and the last client leaving meanwhile.
- turn_state: the turn as a newly attached or reconnecting client is told it.
- asking: one question to every attached client, the first answer winning.
- room: `Attachments`, which holds all of these for the protocol core, the workspace and
  the permission asker; clients are lent through application.ports.clients.
- permissions: `RoomPermissions`, the turn's PermissionAsker: the room's question.
"""
