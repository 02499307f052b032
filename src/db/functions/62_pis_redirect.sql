-- Payment initiation, the PSU's pages (issue 9, redirect part): what the
-- bank's own pages under /auth/payments read. The current definition of
-- each function, applied whole after the migrations (src/db/README.md).

-- GET /auth/payments: the PSU of the browser session (idle rule of the
-- PSU login, session_psu) and their payments, newest first. Unlike the
-- TPP, the PSU sees the specific reason of a rejection (issue 9). The
-- amount stays integer minor units; the page formats it (devcur_format).
CREATE OR REPLACE FUNCTION psu_payments(p_session_hash bytea, p_idle integer,
    OUT psu_id bigint, OUT payments json)
LANGUAGE plpgsql AS $$
BEGIN
	psu_id := session_psu(p_session_hash, p_idle);
	IF psu_id IS NULL THEN
		RETURN;
	END IF;
	SELECT coalesce(json_agg(json_build_object(
	    'id', p.id,
	    'created', to_char(p.created_at AT TIME ZONE 'UTC',
		'YYYY-MM-DD HH24:MI "UTC"'),
	    'tpp', t.name,
	    'amount_minor', p.amount_minor,
	    'currency', p.currency,
	    'creditor_name', p.creditor_name,
	    'creditor_iban', p.creditor_iban,
	    'debtor_iban', p.debtor_iban,
	    'remittance', p.remittance,
	    'status', p.transaction_status,
	    'reason', p.reject_reason)
	    ORDER BY p.created_at DESC, p.id), '[]'::json)
	INTO payments
	FROM (SELECT * FROM payment
	    WHERE payment.psu_id = psu_payments.psu_id
	    ORDER BY created_at DESC, id LIMIT 200) p
	JOIN tpp t ON t.id = p.tpp_id;
END;
$$;

-- GET /auth/payments/{id}/authorise (the scaRedirect of 60_pis.sql):
-- opening the page moves a redirect authorisation of an undecided payment
-- from received to started (Berlin Group: the PSU has begun), with or
-- without a browser session. Then, for the PSU of the session (idle rule
-- of the PSU login): that PSU's payment as the page shows it, or NULL
-- when it is not theirs or not a redirect payment (the page then says
-- unknown, as for any id). psu_id NULL: no session, the login comes first.
CREATE OR REPLACE FUNCTION psu_payment_authorise_page(p_session_hash bytea,
    p_idle integer, p_id uuid, OUT psu_id bigint, OUT payment json)
LANGUAGE plpgsql AS $$
BEGIN
	UPDATE payment_authorisation a SET sca_status = 'started',
	    status_at = now()
	FROM payment p
	WHERE a.payment_id = p_id AND p.id = a.payment_id
	    AND a.approach = 'redirect' AND a.sca_status = 'received'
	    AND p.transaction_status = 'RCVD';
	IF p_session_hash IS NULL THEN
		RETURN;
	END IF;
	psu_id := session_psu(p_session_hash, p_idle);
	IF psu_id IS NULL THEN
		RETURN;
	END IF;
	SELECT json_build_object(
	    'id', p.id,
	    'tpp', t.name,
	    'amount_minor', p.amount_minor,
	    'currency', p.currency,
	    'creditor_name', p.creditor_name,
	    'creditor_iban', p.creditor_iban,
	    'debtor_iban', p.debtor_iban,
	    'remittance', p.remittance,
	    'status', p.transaction_status,
	    'reason', p.reject_reason,
	    'sca_status', a.sca_status)
	INTO payment
	FROM payment p
	JOIN payment_authorisation a ON a.payment_id = p.id
	JOIN tpp t ON t.id = p.tpp_id
	WHERE p.id = p_id AND p.psu_id = psu_payment_authorise_page.psu_id
	    AND a.approach = 'redirect';
END;
$$;
