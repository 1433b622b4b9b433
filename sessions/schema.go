package sessions

// migrations[i] takes the schema from version i to i+1. Append only: a
// released migration is never edited.
var migrations = []string{
	// 1: the first schema.
	`
CREATE TABLE sessions (
	id            TEXT PRIMARY KEY,
	key           TEXT NOT NULL,
	platform      TEXT NOT NULL,
	chat_id       TEXT NOT NULL DEFAULT '',
	chat_type     TEXT NOT NULL DEFAULT '',
	user_id       TEXT NOT NULL DEFAULT '',
	user_name     TEXT NOT NULL DEFAULT '',
	thread_id     TEXT NOT NULL DEFAULT '',
	model         TEXT NOT NULL DEFAULT '',
	title         TEXT NOT NULL DEFAULT '',
	created_at    INTEGER NOT NULL,
	updated_at    INTEGER NOT NULL,
	ended_at      INTEGER,
	end_reason    TEXT NOT NULL DEFAULT '',
	message_count INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX sessions_key_open ON sessions(key) WHERE ended_at IS NULL;
CREATE INDEX sessions_updated ON sessions(updated_at DESC);

CREATE TABLE messages (
	id           INTEGER PRIMARY KEY AUTOINCREMENT,
	session_id   TEXT NOT NULL REFERENCES sessions(id),
	role         TEXT NOT NULL,
	content      TEXT NOT NULL DEFAULT '',
	tool_calls   TEXT NOT NULL DEFAULT '',
	tool_call_id TEXT NOT NULL DEFAULT '',
	tool_name    TEXT NOT NULL DEFAULT '',
	platform_message_id TEXT NOT NULL DEFAULT '',
	created_at   INTEGER NOT NULL
);
CREATE INDEX messages_session ON messages(session_id, id);

CREATE TABLE pairing_codes (
	platform   TEXT NOT NULL,
	code       TEXT NOT NULL,
	user_id    TEXT NOT NULL,
	user_name  TEXT NOT NULL DEFAULT '',
	chat_id    TEXT NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL,
	expires_at INTEGER NOT NULL,
	PRIMARY KEY (platform, code)
);
CREATE TABLE pairings (
	platform    TEXT NOT NULL,
	user_id     TEXT NOT NULL,
	user_name   TEXT NOT NULL DEFAULT '',
	approved_at INTEGER NOT NULL,
	PRIMARY KEY (platform, user_id)
);
CREATE TABLE pairing_attempts (
	platform   TEXT NOT NULL,
	user_id    TEXT NOT NULL,
	kind       TEXT NOT NULL,
	at         INTEGER NOT NULL
);
CREATE INDEX pairing_attempts_user ON pairing_attempts(platform, user_id, kind, at);

CREATE TABLE approvals (
	pattern    TEXT PRIMARY KEY,
	command    TEXT NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL
);

CREATE TABLE platform_offsets (
	platform   TEXT PRIMARY KEY,
	value      TEXT NOT NULL,
	updated_at INTEGER NOT NULL
);

CREATE TABLE cron_jobs (
	id                  TEXT PRIMARY KEY,
	name                TEXT NOT NULL,
	prompt              TEXT NOT NULL DEFAULT '',
	script              TEXT NOT NULL DEFAULT '',
	schedule_kind       TEXT NOT NULL,
	schedule_expr       TEXT NOT NULL,
	schedule_display    TEXT NOT NULL DEFAULT '',
	repeat_times        INTEGER,
	repeat_completed    INTEGER NOT NULL DEFAULT 0,
	enabled             INTEGER NOT NULL DEFAULT 1,
	state               TEXT NOT NULL DEFAULT 'scheduled',
	deliver             TEXT NOT NULL DEFAULT 'local',
	origin              TEXT NOT NULL DEFAULT '',
	created_at          INTEGER NOT NULL,
	next_run_at         INTEGER,
	last_run_at         INTEGER,
	last_status         TEXT NOT NULL DEFAULT '',
	last_error          TEXT NOT NULL DEFAULT '',
	last_delivery_error TEXT NOT NULL DEFAULT '',
	running_since       INTEGER
);
CREATE INDEX cron_jobs_due ON cron_jobs(next_run_at) WHERE enabled = 1;

CREATE TABLE kv (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
`,
	// 2: the inbound journal (inbox.go): every platform message stored on
	// receipt, before the platform is told it arrived.
	`
CREATE TABLE inbox (
	platform    TEXT NOT NULL,
	chat_id     TEXT NOT NULL,
	message_id  TEXT NOT NULL,
	message     TEXT NOT NULL DEFAULT '',
	received_at INTEGER NOT NULL,
	state       TEXT NOT NULL DEFAULT 'received',
	finished_at INTEGER,
	PRIMARY KEY (platform, chat_id, message_id)
);
CREATE INDEX inbox_unfinished ON inbox(received_at) WHERE finished_at IS NULL;
CREATE INDEX inbox_finished ON inbox(finished_at) WHERE finished_at IS NOT NULL;
`,
	// 3: the outbox (outbox.go): what the gateway sent to a chat of a
	// platform whose clients fetch it (the local API), kept so that a
	// reply that comes after its request gave up is not lost.
	`
CREATE TABLE outbox (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	platform   TEXT NOT NULL,
	chat_id    TEXT NOT NULL,
	text       TEXT NOT NULL DEFAULT '',
	file       TEXT NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL
);
CREATE INDEX outbox_chat ON outbox(platform, chat_id, id);
CREATE INDEX outbox_created ON outbox(created_at);
`,
	// 4: the send queue (sendqueue.go): messages a platform's rate limit
	// holds back for longer than the gateway waits in line, delivered
	// when the wait has passed, also after a restart.
	`
CREATE TABLE send_queue (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	platform   TEXT NOT NULL,
	chat_id    TEXT NOT NULL,
	thread_id  TEXT NOT NULL DEFAULT '',
	text       TEXT NOT NULL,
	cause      TEXT NOT NULL DEFAULT '',
	part       INTEGER NOT NULL DEFAULT 0,
	parts      INTEGER NOT NULL DEFAULT 0,
	plain      INTEGER NOT NULL DEFAULT 0,
	edit_id    TEXT NOT NULL DEFAULT '',
	not_before INTEGER NOT NULL,
	created_at INTEGER NOT NULL
);
CREATE INDEX send_queue_chat ON send_queue(platform, chat_id, id);
`,
	// 5: buttons under an outbox message (an approval prompt's choices,
	// as JSON), and when the message was last edited (a prompt closed).
	`
ALTER TABLE outbox ADD COLUMN buttons TEXT NOT NULL DEFAULT '';
ALTER TABLE outbox ADD COLUMN edited_at INTEGER;
`,
}
