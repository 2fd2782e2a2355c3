"""The SQLite schema at the newest revision, as DDL text: written by
scripts/write-sqlite-schema from tables.py (do not edit by hand). The start path creates a
new database with it before SQLAlchemy has loaded (early_writes.py); a test holds it equal
to what `fresh_schema.create_at_head` runs."""

# fmt: off
STATEMENTS: tuple[str, ...] = (
    (
        'CREATE TABLE sessions (\n'
        '\tid VARCHAR(64) NOT NULL, \n'
        '\tcwd TEXT NOT NULL, \n'
        '\ttitle TEXT, \n'
        '\tcreated_at DATETIME NOT NULL, \n'
        '\tupdated_at DATETIME NOT NULL, \n'
        '\tmode_id VARCHAR(64) NOT NULL, \n'
        '\tmodel VARCHAR(200) NOT NULL, \n'
        '\tconfig JSON NOT NULL, \n'
        '\tmessage_count INTEGER NOT NULL, \n'
        '\tparent_id VARCHAR(64), \n'
        '\tfork_position INTEGER, \n'
        '\tdeleted_at DATETIME, \n'
        "\tadditional_directories JSON DEFAULT '[]' NOT NULL, \n"
        "\tmcp_servers JSON DEFAULT '[]' NOT NULL, \n"
        '\tsystem_prompt JSON, \n'
        "\tversion INTEGER DEFAULT '0' NOT NULL, \n"
        '\tspawned_by VARCHAR(64), \n'
        '\tspawn_call_id VARCHAR(128), \n'
        '\tspawn_agent VARCHAR(100), \n'
        '\tCONSTRAINT pk_sessions PRIMARY KEY (id)\n'
        ')'
    ),
    (
        'CREATE TABLE project_rules (\n'
        '\tid INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, \n'
        '\tcwd TEXT NOT NULL, \n'
        '\ttool_name VARCHAR(100) NOT NULL, \n'
        '\tcommand JSON, \n'
        '\texact BOOLEAN, \n'
        '\tgrant_key TEXT NOT NULL, \n'
        '\tcreated_at DATETIME NOT NULL, \n'
        '\tsession_id VARCHAR(64), \n'
        '\tCONSTRAINT uq_project_rules_grant UNIQUE (cwd, tool_name, grant_key)\n'
        ')'
    ),
    (
        'CREATE TABLE session_updates (\n'
        '\tsession_id VARCHAR(64) NOT NULL, \n'
        '\tseq BIGINT NOT NULL, \n'
        '\tcreated_at DATETIME NOT NULL, \n'
        '\tparams TEXT NOT NULL, \n'
        '\tCONSTRAINT pk_session_updates PRIMARY KEY (session_id, seq)\n'
        ')'
    ),
    (
        'CREATE TABLE http_connections (\n'
        '\tid VARCHAR(200) NOT NULL, \n'
        '\tupdated_at DATETIME NOT NULL, \n'
        '\trecord JSON NOT NULL, \n'
        '\tCONSTRAINT pk_http_connections PRIMARY KEY (id)\n'
        ')'
    ),
    (
        'CREATE TABLE routed_requests (\n'
        '\tid VARCHAR(64) NOT NULL, \n'
        '\tsession_id VARCHAR(64) NOT NULL, \n'
        '\tholder VARCHAR(128) NOT NULL, \n'
        '\tsender VARCHAR(128) NOT NULL, \n'
        '\tmethod VARCHAR(100) NOT NULL, \n'
        '\tparams JSON NOT NULL, \n'
        '\tstate VARCHAR(16) NOT NULL, \n'
        '\toutcome JSON, \n'
        '\tcreated_at DATETIME NOT NULL, \n'
        '\tCONSTRAINT pk_routed_requests PRIMARY KEY (id)\n'
        ')'
    ),
    (
        'CREATE TABLE asked_questions (\n'
        '\tid VARCHAR(64) NOT NULL, \n'
        '\tsession_id VARCHAR(64) NOT NULL, \n'
        '\tholder VARCHAR(128) NOT NULL, \n'
        '\tsubject VARCHAR(128) NOT NULL, \n'
        '\tmethod VARCHAR(100) NOT NULL, \n'
        '\tparams JSON NOT NULL, \n'
        '\tcreated_at DATETIME NOT NULL, \n'
        '\tCONSTRAINT pk_asked_questions PRIMARY KEY (id)\n'
        ')'
    ),
    (
        'CREATE TABLE replicas (\n'
        '\tid VARCHAR(128) NOT NULL, \n'
        '\texpires_at DATETIME NOT NULL, \n'
        '\tCONSTRAINT pk_replicas PRIMARY KEY (id)\n'
        ')'
    ),
    (
        'CREATE TABLE session_attachments (\n'
        '\tsession_id VARCHAR(64) NOT NULL, \n'
        '\treplica_id VARCHAR(128) NOT NULL, \n'
        '\tclients INTEGER NOT NULL, \n'
        '\tattached_at DATETIME NOT NULL, \n'
        '\tCONSTRAINT pk_session_attachments PRIMARY KEY (session_id, replica_id)\n'
        ')'
    ),
    (
        'CREATE TABLE messages (\n'
        '\tsession_id VARCHAR(64) NOT NULL, \n'
        '\tposition INTEGER NOT NULL, \n'
        '\tid VARCHAR(64) NOT NULL, \n'
        '\trole VARCHAR(16) NOT NULL, \n'
        '\tcontent JSON NOT NULL, \n'
        '\tinterrupted BOOLEAN NOT NULL, \n'
        '\tcreated_at DATETIME NOT NULL, \n'
        "\tkind VARCHAR(16) DEFAULT 'chat' NOT NULL, \n"
        '\tmeta JSON, \n'
        '\tCONSTRAINT pk_messages PRIMARY KEY (session_id, position), \n'
        '\tCONSTRAINT fk_messages_session_id_sessions FOREIGN KEY(session_id) REFERENCES sessions (id) ON DELETE CASCADE\n'
        ')'
    ),
    (
        'CREATE TABLE turns (\n'
        '\tid INTEGER NOT NULL, \n'
        '\tsession_id VARCHAR(64) NOT NULL, \n'
        '\tstarted_at DATETIME NOT NULL, \n'
        '\tfinished_at DATETIME, \n'
        '\tstop_reason VARCHAR(32), \n'
        '\trequests INTEGER NOT NULL, \n'
        '\tinput_tokens INTEGER NOT NULL, \n'
        '\toutput_tokens INTEGER NOT NULL, \n'
        '\tcache_read_tokens INTEGER NOT NULL, \n'
        '\tcache_write_tokens INTEGER NOT NULL, \n'
        '\terror TEXT, \n'
        '\tcost FLOAT, \n'
        '\tCONSTRAINT pk_turns PRIMARY KEY (id), \n'
        '\tCONSTRAINT fk_turns_session_id_sessions FOREIGN KEY(session_id) REFERENCES sessions (id) ON DELETE CASCADE\n'
        ')'
    ),
    (
        'CREATE TABLE session_leases (\n'
        '\tsession_id VARCHAR(64) NOT NULL, \n'
        '\tholder VARCHAR(128) NOT NULL, \n'
        '\texpires_at DATETIME NOT NULL, \n'
        '\tcancel_requested BOOLEAN DEFAULT 0 NOT NULL, \n'
        '\tCONSTRAINT pk_session_leases PRIMARY KEY (session_id), \n'
        '\tCONSTRAINT fk_session_leases_session_id_sessions FOREIGN KEY(session_id) REFERENCES sessions (id) ON DELETE CASCADE\n'
        ')'
    ),
    (
        'CREATE TABLE tool_calls (\n'
        '\tsession_id VARCHAR(64) NOT NULL, \n'
        '\tid VARCHAR(128) NOT NULL, \n'
        '\tname VARCHAR(100) NOT NULL, \n'
        '\ttitle TEXT NOT NULL, \n'
        '\tkind VARCHAR(32) NOT NULL, \n'
        '\tstatus VARCHAR(32) NOT NULL, \n'
        '\targuments JSON NOT NULL, \n'
        '\tlocations JSON NOT NULL, \n'
        '\toutput JSON NOT NULL, \n'
        '\traw_output JSON, \n'
        '\tCONSTRAINT pk_tool_calls PRIMARY KEY (session_id, id), \n'
        '\tCONSTRAINT fk_tool_calls_session_id_sessions FOREIGN KEY(session_id) REFERENCES sessions (id) ON DELETE CASCADE\n'
        ')'
    ),
    (
        'CREATE TABLE permission_decisions (\n'
        '\tid INTEGER NOT NULL, \n'
        '\tsession_id VARCHAR(64) NOT NULL, \n'
        '\ttool_call_id VARCHAR(128) NOT NULL, \n'
        '\ttool_name VARCHAR(100) NOT NULL, \n'
        '\targuments JSON NOT NULL, \n'
        '\toption VARCHAR(32), \n'
        '\tdecided_by VARCHAR(32) NOT NULL, \n'
        '\tdecided_at DATETIME NOT NULL, \n'
        '\tCONSTRAINT pk_permission_decisions PRIMARY KEY (id), \n'
        '\tCONSTRAINT fk_permission_decisions_session_id_sessions FOREIGN KEY(session_id) REFERENCES sessions (id) ON DELETE CASCADE\n'
        ')'
    ),
    (
        'CREATE TABLE file_checkpoints (\n'
        '\tseq INTEGER NOT NULL, \n'
        '\tsession_id VARCHAR(64) NOT NULL, \n'
        '\tmessage_id VARCHAR(64) NOT NULL, \n'
        '\tpath TEXT NOT NULL, \n'
        '\tprior VARCHAR(64) NOT NULL, \n'
        '\t"after" VARCHAR(64), \n'
        '\tunrestorable VARCHAR(32), \n'
        '\tCONSTRAINT pk_file_checkpoints PRIMARY KEY (seq), \n'
        '\tCONSTRAINT fk_file_checkpoints_session_id_sessions FOREIGN KEY(session_id) REFERENCES sessions (id) ON DELETE CASCADE\n'
        ')'
    ),
    (
        'CREATE TABLE checkpoint_blobs (\n'
        '\tsession_id VARCHAR(64) NOT NULL, \n'
        '\tstate VARCHAR(64) NOT NULL, \n'
        '\tsize BIGINT NOT NULL, \n'
        '\tcontent BLOB NOT NULL, \n'
        '\tCONSTRAINT pk_checkpoint_blobs PRIMARY KEY (session_id, state), \n'
        '\tCONSTRAINT fk_checkpoint_blobs_session_id_sessions FOREIGN KEY(session_id) REFERENCES sessions (id) ON DELETE CASCADE\n'
        ')'
    ),
    (
        'CREATE TABLE rewind_undos (\n'
        '\tsession_id VARCHAR(64) NOT NULL, \n'
        '\ttoken VARCHAR(64) NOT NULL, \n'
        '\tposition INTEGER NOT NULL, \n'
        '\tto_message_id VARCHAR(64) NOT NULL, \n'
        '\tmessages JSON NOT NULL, \n'
        '\tfiles JSON NOT NULL, \n'
        '\tCONSTRAINT pk_rewind_undos PRIMARY KEY (session_id), \n'
        '\tCONSTRAINT fk_rewind_undos_session_id_sessions FOREIGN KEY(session_id) REFERENCES sessions (id) ON DELETE CASCADE\n'
        ')'
    ),
    (
        'CREATE TABLE alembic_version (\n'
        '\tversion_num VARCHAR(32) NOT NULL, \n'
        '\tCONSTRAINT alembic_version_pkc PRIMARY KEY (version_num)\n'
        ')'
    ),
    (
        'CREATE INDEX ix_asked_questions_session_id ON asked_questions (session_id)'
    ),
    (
        'CREATE INDEX ix_file_checkpoints_session_message ON file_checkpoints (session_id, message_id)'
    ),
    (
        'CREATE INDEX ix_http_connections_updated_at ON http_connections (updated_at)'
    ),
    (
        'CREATE INDEX ix_permission_decisions_session_id ON permission_decisions (session_id)'
    ),
    (
        'CREATE INDEX ix_project_rules_cwd_created ON project_rules (cwd, created_at, id)'
    ),
    (
        'CREATE INDEX ix_routed_requests_holder ON routed_requests (holder, state)'
    ),
    (
        'CREATE INDEX ix_session_attachments_replica_id ON session_attachments (replica_id)'
    ),
    (
        'CREATE INDEX ix_session_updates_created_at ON session_updates (created_at)'
    ),
    (
        'CREATE INDEX ix_sessions_cwd_updated ON sessions (cwd, updated_at, id)'
    ),
    (
        'CREATE INDEX ix_sessions_parent_id ON sessions (parent_id)'
    ),
    (
        'CREATE INDEX ix_sessions_spawned_by ON sessions (spawned_by)'
    ),
    (
        'CREATE INDEX ix_sessions_updated ON sessions (updated_at, id)'
    ),
    (
        'CREATE INDEX ix_turns_session_id ON turns (session_id)'
    ),
)
# fmt: on
