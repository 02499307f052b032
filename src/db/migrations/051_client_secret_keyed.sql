-- Client secrets keyed and salted (src/common/client_secret.h):
-- secret_hash = HMAC-SHA256(client key secret_key_id,
-- "client-secret" 0 secret_salt SHA-256(secret)). Rows without salt and
-- key id keep the earlier form, secret_hash = SHA-256(secret), until
-- `psd2ctl tpp rehash` converts them (it needs the client key file,
-- which a migration does not see).
ALTER TABLE oauth_client
	ADD COLUMN secret_salt bytea CHECK (length(secret_salt) = 16),
	ADD COLUMN secret_key_id text CHECK (secret_key_id ~ '^[A-Za-z0-9_-]{1,16}$'),
	ADD CONSTRAINT oauth_client_secret_form
	    CHECK ((secret_salt IS NULL) = (secret_key_id IS NULL));

-- Its result gains the salt and the key id (src/db/functions/20_oauth.sql).
DROP FUNCTION token_client(text, text, integer);
