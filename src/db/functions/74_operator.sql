-- psd2ctl's writes (src/ctl/): people, accounts and TPP clients. Each is
-- one transaction with its audit row, the actor 'operator:<login>'.
-- Secrets arrive protected: passwords as argon2id strings, TOTP seeds
-- sealed (src/common/secretbox.h), client secrets keyed and salted
-- (src/common/client_secret.h). psd2ctl's other writes reuse the staff
-- pages' functions (staff_device_action, device_enrol, staff_tpp_status,
-- staff_client_add, staff_member_action).

-- A PSU; its id, or NULL when the username is taken.
CREATE OR REPLACE FUNCTION operator_psu_add(p_actor text, p_username text,
    p_display text, p_password_hash text, p_totp_box text)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	new_id bigint;
BEGIN
	INSERT INTO psu (username, display_name, password_hash, totp_box)
	VALUES (p_username, p_display, p_password_hash, p_totp_box)
	ON CONFLICT (username) DO NOTHING
	RETURNING id INTO new_id;
	IF new_id IS NOT NULL THEN
		INSERT INTO audit_log (actor, action, detail)
		VALUES (p_actor, 'psu.add',
		    jsonb_build_object('username', p_username));
	END IF;
	RETURN new_id;
END;
$$;

-- A staff member with a role (operator or admin); its id, or NULL when
-- the username is taken.
CREATE OR REPLACE FUNCTION operator_staff_add(p_actor text,
    p_username text, p_display text, p_password_hash text,
    p_totp_box text, p_role text)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	new_id bigint;
BEGIN
	IF p_role NOT IN ('operator', 'admin') THEN
		RAISE EXCEPTION 'unknown staff role %', p_role;
	END IF;
	INSERT INTO staff (username, display_name, password_hash, totp_box,
	    role)
	VALUES (p_username, p_display, p_password_hash, p_totp_box, p_role)
	ON CONFLICT (username) DO NOTHING
	RETURNING id INTO new_id;
	IF new_id IS NOT NULL THEN
		INSERT INTO audit_log (actor, action, detail)
		VALUES (p_actor, 'staff.add', jsonb_build_object('username',
		    p_username, 'role', p_role));
	END IF;
	RETURN new_id;
END;
$$;

-- Clears a PSU's failed logins and lock; false when there is no such PSU.
CREATE OR REPLACE FUNCTION operator_psu_unlock(p_actor text,
    p_username text)
RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
	UPDATE psu SET failed_logins = 0, locked_until = NULL
	WHERE username = p_username;
	IF NOT FOUND THEN
		RETURN false;
	END IF;
	INSERT INTO audit_log (actor, action, detail)
	VALUES (p_actor, 'psu.unlock',
	    jsonb_build_object('username', p_username));
	RETURN true;
END;
$$;

-- An account of a PSU, held in the PSU's name; its resource id, or NULL
-- when there is no such PSU.
CREATE OR REPLACE FUNCTION operator_account_add(p_actor text,
    p_resource_id text, p_username text, p_iban text, p_name text,
    p_currency text)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	rid text;
BEGIN
	INSERT INTO account (resource_id, psu_id, iban, name, holder_name,
	    currency)
	SELECT p_resource_id, id, p_iban, p_name, display_name, p_currency
	FROM psu WHERE username = p_username
	RETURNING resource_id INTO rid;
	IF rid IS NOT NULL THEN
		INSERT INTO audit_log (actor, action, detail)
		VALUES (p_actor, 'account.add', jsonb_build_object(
		    'resource_id', rid, 'psu', p_username));
	END IF;
	RETURN rid;
END;
$$;

-- A TPP client (psd2ctl tpp add, sandbox-seed): the TPP is registered
-- first when its organisation id is new (tpp.register), then the client
-- as the staff pages add one (staff_client_add: its checks, its
-- tpp.client_add row). A client refused by those checks is an error, so
-- that nothing of the call stays. result: ok.
CREATE OR REPLACE FUNCTION operator_client_add(p_actor text, p_name text,
    p_org_id text, p_client_id text, p_hash bytea, p_salt bytea,
    p_key_id text, p_uris text[], p_pkce boolean, p_ttl integer)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	r text;
BEGIN
	IF coalesce(p_name, '') = '' OR coalesce(p_org_id, '') = '' THEN
		RAISE EXCEPTION 'a TPP needs a name and an organisation id';
	END IF;
	INSERT INTO tpp (name, org_id) VALUES (p_name, p_org_id)
	ON CONFLICT (org_id) DO NOTHING;
	IF FOUND THEN
		INSERT INTO audit_log (actor, action, detail)
		VALUES (p_actor, 'tpp.register', jsonb_build_object('org_id',
		    p_org_id, 'name', p_name));
	END IF;
	r := staff_client_add(p_actor, p_org_id, p_client_id, p_hash, p_salt,
	    p_key_id, p_uris, p_pkce, p_ttl);
	IF r <> 'ok' THEN
		RAISE EXCEPTION 'client % not added: %', p_client_id,
		    CASE r WHEN 'exists' THEN 'the client id is taken'
			WHEN 'bad_input' THEN 'client id (letters, digits, '
			    '._-), redirect URIs or access ttl (1 to 86400 s) '
			    'not accepted'
			ELSE r END;
	END IF;
	RETURN r;
END;
$$;

-- Refresh token rotation of a client on or off (migration 192); with
-- its audit row when it changes. false: no such client.
CREATE OR REPLACE FUNCTION operator_client_rotation(p_actor text,
    p_client_id text, p_rotation boolean)
RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
	PERFORM 1 FROM oauth_client WHERE client_id = p_client_id;
	IF NOT FOUND THEN
		RETURN false;
	END IF;
	UPDATE oauth_client SET refresh_rotation = p_rotation
	WHERE client_id = p_client_id
	    AND refresh_rotation IS DISTINCT FROM p_rotation;
	IF FOUND THEN
		INSERT INTO audit_log (actor, action, detail)
		VALUES (p_actor, 'tpp.client_rotation',
		    jsonb_build_object('client_id', p_client_id,
			'rotation', p_rotation));
	END IF;
	RETURN true;
END;
$$;

-- Whether a client must push its authorisation requests (RFC 9126,
-- migration 193); false when there is no such client.
CREATE OR REPLACE FUNCTION operator_client_par(p_actor text,
    p_client_id text, p_required boolean)
RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
	PERFORM 1 FROM oauth_client WHERE client_id = p_client_id;
	IF NOT FOUND THEN
		RETURN false;
	END IF;
	UPDATE oauth_client SET par_required = p_required
	WHERE client_id = p_client_id
	    AND par_required IS DISTINCT FROM p_required;
	IF FOUND THEN
		INSERT INTO audit_log (actor, action, detail)
		VALUES (p_actor, 'tpp.client_par',
		    jsonb_build_object('client_id', p_client_id,
			'par_required', p_required));
	END IF;
	RETURN true;
END;
$$;

-- How a client authenticates (migrations 194, 195); false when there is
-- no such client. private_key_jwt needs the client's keys first.
CREATE OR REPLACE FUNCTION operator_client_auth(p_actor text,
    p_client_id text, p_method text)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
	v_jwks jsonb;
BEGIN
	SELECT jwks INTO v_jwks FROM oauth_client
	WHERE client_id = p_client_id FOR UPDATE;
	IF NOT FOUND THEN
		RETURN false;
	END IF;
	IF p_method = 'private_key_jwt' AND v_jwks IS NULL THEN
		RAISE EXCEPTION 'client % has no keys: register them first '
		    '(psd2ctl tpp jwks)', p_client_id;
	END IF;
	UPDATE oauth_client SET auth_method = p_method
	WHERE client_id = p_client_id
	    AND auth_method IS DISTINCT FROM p_method;
	IF FOUND THEN
		INSERT INTO audit_log (actor, action, detail)
		VALUES (p_actor, 'tpp.client_auth',
		    jsonb_build_object('client_id', p_client_id,
			'auth_method', p_method));
	END IF;
	RETURN true;
END;
$$;

-- A client's public keys for private_key_jwt (migration 195), a JWK Set
-- that psd2ctl has checked (src/common/jws.h); the audit row names the
-- keys' ids and types, and the SHA-256 of the set as stored. false when
-- there is no such client.
CREATE OR REPLACE FUNCTION operator_client_jwks(p_actor text,
    p_client_id text, p_jwks jsonb)
RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
	UPDATE oauth_client SET jwks = p_jwks
	WHERE client_id = p_client_id;
	IF NOT FOUND THEN
		RETURN false;
	END IF;
	INSERT INTO audit_log (actor, action, detail)
	VALUES (p_actor, 'tpp.client_jwks', jsonb_build_object(
	    'client_id', p_client_id,
	    'keys', (SELECT jsonb_agg(jsonb_build_object('kty', k->>'kty',
		'kid', k->>'kid')) FROM jsonb_array_elements(p_jwks->'keys') k),
	    'sha256', encode(sha256(convert_to(p_jwks::text, 'UTF8')), 'hex')));
	RETURN true;
END;
$$;

-- A client secret row of the unsalted form (secret_hash = SHA-256 of the
-- secret) to the keyed form over the same digest; only while the row is
-- still the one psd2ctl read (p_old_hash). true when converted.
CREATE OR REPLACE FUNCTION operator_client_rehash(p_actor text,
    p_client_id text, p_old_hash bytea, p_hash bytea, p_salt bytea,
    p_key_id text)
RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
	UPDATE oauth_client SET secret_hash = p_hash, secret_salt = p_salt,
	    secret_key_id = p_key_id
	WHERE client_id = p_client_id AND secret_key_id IS NULL
	    AND secret_hash = p_old_hash;
	IF NOT FOUND THEN
		RETURN false;
	END IF;
	INSERT INTO audit_log (actor, action, detail)
	VALUES (p_actor, 'tpp.client_rehash', jsonb_build_object('client_id',
	    p_client_id, 'key_id', p_key_id));
	RETURN true;
END;
$$;
