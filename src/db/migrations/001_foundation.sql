-- psd2gate foundation: TPPs and their OAuth clients, PSUs and staff,
-- accounts, consents, authorisation codes, tokens, browser sessions and
-- the unlogged rate-limit counters.
--
-- Secrets are never stored: client secrets, codes, tokens and session ids
-- as SHA-256 digests, passwords as argon2id strings, TOTP seeds encrypted
-- (AES-256-GCM, key outside the database).

CREATE TABLE tpp (
	id		bigserial PRIMARY KEY,
	name		text NOT NULL,
	org_id		text NOT NULL UNIQUE
			CHECK (org_id ~ '^PSD[A-Z]{2}-[A-Z]{2,8}-.+$'),
	status		text NOT NULL DEFAULT 'active'
			CHECK (status IN ('active', 'suspended')),
	created_at	timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE oauth_client (
	client_id	text PRIMARY KEY CHECK (client_id ~ '^[A-Za-z0-9._-]{1,64}$'),
	tpp_id		bigint NOT NULL REFERENCES tpp(id),
	secret_hash	bytea NOT NULL CHECK (length(secret_hash) = 32),
	redirect_uris	text[] NOT NULL CHECK (cardinality(redirect_uris) > 0),
	pkce_required	boolean NOT NULL DEFAULT false,
	access_ttl	integer NOT NULL DEFAULT 900 CHECK (access_ttl > 0),
	status		text NOT NULL DEFAULT 'active'
			CHECK (status IN ('active', 'suspended')),
	created_at	timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oauth_client_tpp ON oauth_client (tpp_id);

CREATE TABLE psu (
	id		bigserial PRIMARY KEY,
	username	text NOT NULL UNIQUE,
	display_name	text NOT NULL,
	password_hash	text NOT NULL,
	totp_box	text NOT NULL,
	totp_last_step	bigint NOT NULL DEFAULT 0,
	failed_logins	integer NOT NULL DEFAULT 0,
	locked_until	timestamptz,
	created_at	timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE staff (
	id		bigserial PRIMARY KEY,
	username	text NOT NULL UNIQUE,
	display_name	text NOT NULL,
	password_hash	text NOT NULL,
	totp_box	text NOT NULL,
	totp_last_step	bigint NOT NULL DEFAULT 0,
	failed_logins	integer NOT NULL DEFAULT 0,
	locked_until	timestamptz,
	created_at	timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE account (
	id		bigserial PRIMARY KEY,
	resource_id	text NOT NULL UNIQUE,
	psu_id		bigint NOT NULL REFERENCES psu(id),
	iban		text NOT NULL UNIQUE CHECK (iban ~ '^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$'),
	name		text NOT NULL,
	holder_name	text NOT NULL,
	currency	char(3) NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
	created_at	timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX account_psu ON account (psu_id);

CREATE TABLE consent (
	id		uuid PRIMARY KEY,
	psu_id		bigint NOT NULL REFERENCES psu(id),
	client_id	text NOT NULL REFERENCES oauth_client(client_id),
	scopes		text[] NOT NULL,
	status		text NOT NULL DEFAULT 'valid'
			CHECK (status IN ('received', 'rejected', 'valid',
			    'revokedByPsu', 'expired', 'terminatedByTpp')),
	valid_until	date NOT NULL,
	frequency_per_day integer NOT NULL DEFAULT 4,
	sca_at		timestamptz NOT NULL,
	last_used_at	timestamptz,
	status_at	timestamptz NOT NULL DEFAULT now(),
	created_at	timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX consent_psu ON consent (psu_id);

CREATE TABLE consent_account (
	consent_id	uuid NOT NULL REFERENCES consent(id) ON DELETE CASCADE,
	account_id	bigint NOT NULL REFERENCES account(id),
	PRIMARY KEY (consent_id, account_id)
);

-- A code and every token issued from it, directly or by refresh, share a
-- family: replaying a code or a spent refresh token revokes the family.
CREATE TABLE auth_code (
	code_hash	bytea PRIMARY KEY CHECK (length(code_hash) = 32),
	family		uuid NOT NULL,
	client_id	text NOT NULL REFERENCES oauth_client(client_id),
	redirect_uri	text NOT NULL,
	consent_id	uuid NOT NULL REFERENCES consent(id),
	code_challenge	text,
	scopes		text[] NOT NULL,
	expires_at	timestamptz NOT NULL,
	used_at		timestamptz,
	created_at	timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE token (
	token_hash	bytea PRIMARY KEY CHECK (length(token_hash) = 32),
	kind		text NOT NULL CHECK (kind IN ('access', 'refresh')),
	family		uuid NOT NULL,
	client_id	text NOT NULL REFERENCES oauth_client(client_id),
	consent_id	uuid NOT NULL REFERENCES consent(id),
	scopes		text[] NOT NULL,
	expires_at	timestamptz NOT NULL,
	used_at		timestamptz,
	revoked_at	timestamptz,
	cnf_x5t_s256	text,
	created_at	timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX token_family ON token (family);
CREATE INDEX token_consent ON token (consent_id);
CREATE INDEX token_expires ON token (expires_at);

CREATE TABLE web_session (
	id_hash		bytea PRIMARY KEY CHECK (length(id_hash) = 32),
	subject_kind	text NOT NULL CHECK (subject_kind IN ('psu', 'staff')),
	subject_id	bigint NOT NULL,
	created_at	timestamptz NOT NULL DEFAULT now(),
	last_seen_at	timestamptz NOT NULL DEFAULT now(),
	expires_at	timestamptz NOT NULL
);
CREATE INDEX web_session_expires ON web_session (expires_at);

-- Per-address counters for login and token rate limits. Unlogged: a
-- database crash resets them, which only forgives a minute of attempts.
CREATE UNLOGGED TABLE rate_counter (
	bucket		text NOT NULL,
	window_start	timestamptz NOT NULL,
	hits		integer NOT NULL,
	PRIMARY KEY (bucket, window_start)
);

CREATE TABLE audit_log (
	id		bigserial PRIMARY KEY,
	at		timestamptz NOT NULL DEFAULT now(),
	actor		text NOT NULL,
	action		text NOT NULL,
	detail		jsonb NOT NULL DEFAULT '{}'
);

-- Counts one hit for bucket in the current minute; true while within limit.
CREATE FUNCTION rate_hit(p_bucket text, p_limit integer) RETURNS boolean
LANGUAGE sql AS $$
	INSERT INTO rate_counter AS r (bucket, window_start, hits)
	VALUES (p_bucket, date_trunc('minute', now()), 1)
	ON CONFLICT (bucket, window_start) DO UPDATE SET hits = r.hits + 1
	RETURNING p_limit <= 0 OR hits <= p_limit;
$$;
