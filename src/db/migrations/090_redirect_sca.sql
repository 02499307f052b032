-- 090_redirect_sca: redirect SCA after a password-only login, on the
-- authenticator or by TOTP on the page that shows the payment, and the
-- redirect deadline (issue 9).
--	web_session: a "psu_payment" session is opened by the password
--	alone and is good for one payment's authorise page only
--	(payment_id); every other page keeps asking for a "psu" session.
--	payment_authorisation: open redirect authorisations that no device
--	challenge has taken over yet are found by their deadline (the
--	decider's sweep ends them RJCT timed out).
--	pis_initiate gains p_redirect_seconds (the redirect deadline): the
--	old signature goes (a fresh database never had it here).
-- Run inside the migration runner's transaction (no BEGIN/COMMIT here).

ALTER TABLE web_session DROP CONSTRAINT web_session_subject_kind_check;
ALTER TABLE web_session ADD COLUMN payment_id uuid;
ALTER TABLE web_session ADD CONSTRAINT web_session_subject_kind_check
	CHECK (subject_kind IN ('psu', 'staff', 'psu_payment'));
ALTER TABLE web_session ADD CONSTRAINT web_session_payment_scope
	CHECK ((subject_kind = 'psu_payment') = (payment_id IS NOT NULL));

CREATE INDEX payment_authorisation_redirect_open
	ON payment_authorisation (deadline)
	WHERE sca_status IN ('received', 'started') AND approach = 'redirect'
	    AND method IS NULL;

-- Redirect authorisations left open so far had the device's deadline,
-- which nothing enforced: give their PSUs the default redirect time from
-- now rather than failing them all at the first sweep.
UPDATE payment_authorisation SET deadline = greatest(deadline,
    now() + interval '600 seconds')
WHERE sca_status IN ('received', 'started') AND approach = 'redirect'
    AND method IS NULL;

DROP FUNCTION IF EXISTS pis_initiate(bytea, text, text, uuid, inet, text, jsonb, bytea,
    boolean, text, text, integer);
