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
