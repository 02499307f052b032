-- Who may execute what: the one place where SQL functions get EXECUTE.
-- Applied last of the functions files (its name sorts last), on every
-- psd2ctl migrate, in the same transaction as the definitions above.
--
-- Every function in schema public first loses EXECUTE for PUBLIC and for
-- the three roles of migration 083, then gets exactly the grants listed
-- below. So a function that is not listed here (a new one, whoever wrote
-- it) can be executed by no one but its owner; migrate warns about it,
-- and tests/migrate/test_function_grants.py fails until it is listed
-- here and in src/db/README.md, "Who may execute what" (the same table).
-- Migration 121 also stops PUBLIC getting EXECUTE on functions the owner
-- creates from then on, so a function that a migration makes is never
-- executable by PUBLIC, not even until this file runs.
--
-- A role needs EXECUTE on a function it calls, and on the functions that
-- one calls unless it is SECURITY DEFINER (those run as the owner).
-- Trigger functions need none: PostgreSQL does not check EXECUTE when a
-- trigger fires.
DO $$
DECLARE
	f regprocedure;
	g record;
	r name;
	v_roles name[] := ARRAY(SELECT rolname FROM pg_roles WHERE rolname
	    IN ('psd2_service', 'psd2_operator', 'psd2_daemon'));
BEGIN
	CREATE TEMP TABLE function_grant (fn regprocedure PRIMARY KEY,
	    roles name[] NOT NULL) ON COMMIT DROP;
	-- One row per function: its signature and the roles that execute it
	-- ('{}': nobody but the owner).
	INSERT INTO function_grant (fn, roles) VALUES
		('access_log_ensure(integer)', '{psd2_service,psd2_operator}'),
		('access_log_purge(integer)', '{psd2_operator}'),
		('ais_access(uuid,timestamp with time zone,text,bigint,uuid,text,boolean,inet,integer)', '{psd2_service}'),
		('ais_account_balance(bytea,text,text,uuid,inet,integer,text)', '{psd2_service}'),
		('ais_account_list(bytea,text,text,uuid,inet,integer)', '{psd2_service}'),
		('ais_amount(bigint,text)', '{psd2_service}'),
		('ais_bearer_only(bytea,text)', '{psd2_service}'),
		('ais_consent_current(bytea,text,text,uuid,inet,integer,boolean)', '{psd2_service}'),
		('ais_funds_check(uuid,timestamp with time zone,uuid,inet,text,text,bigint)', '{psd2_service}'),
		('ais_funds_confirmation(bytea,text,text,uuid,inet,integer,text,text,bigint)', '{psd2_service}'),
		('ais_gate(bytea,text,text,uuid,text)', '{psd2_service}'),
		('ais_transactions(bytea,text,text,uuid,inet,integer,text,date,date,integer,integer)', '{psd2_service}'),
		('audit_canonical(bigint,bigint,timestamp with time zone,text,text,jsonb)', '{}'),
		('audit_log_guard()', '{}'),
		('audit_seal(integer)', '{psd2_service,psd2_operator}'),
		('audit_seal(integer,bigint)', '{psd2_service,psd2_operator}'),
		('bearer_check(bytea)', '{psd2_service}'),
		('bearer_check(bytea,text)', '{psd2_service}'),
		('bg_access_named(jsonb)', '{psd2_service}'),
		('bg_access_rights(text,jsonb)', '{psd2_service}'),
		('bg_account(bytea,text,text,uuid,inet,uuid,uuid,integer,text,boolean)', '{psd2_service}'),
		('bg_account_balances(bytea,text,text,uuid,inet,uuid,uuid,integer,text)', '{psd2_service}'),
		('bg_account_json(text,text,text,text,text,boolean,boolean,json)', '{psd2_service}'),
		('bg_account_links(text,boolean,boolean)', '{psd2_service}'),
		('bg_account_list(bytea,text,text,uuid,inet,uuid,uuid,integer,boolean)', '{psd2_service}'),
		('bg_account_of(uuid,bigint,text,text,text)', '{psd2_service}'),
		('bg_ais_read(bytea,text,text,uuid,inet,uuid,uuid,integer,text,text,text,text,text,boolean)', '{psd2_service}'),
		('bg_amount(bigint,text)', '{psd2_service}'),
		('bg_authorisation_links(uuid,uuid,text,text)', '{psd2_service}'),
		('bg_authorisation_new(uuid,text,text,uuid)', '{psd2_service}'),
		('bg_authorise_page(uuid,uuid)', '{psd2_service}'),
		('bg_authreq(uuid,uuid,text)', '{psd2_service}'),
		('bg_balances(bigint,text)', '{psd2_service}'),
		('bg_bearer_only(bytea,text)', '{psd2_service}'),
		('bg_booked_entry(text,date,date,bigint,text,text)', '{psd2_service}'),
		('bg_consent_access(uuid)', '{psd2_service}'),
		('bg_consent_authorisation_start(bytea,text,text,uuid,inet,uuid,uuid,uuid,text,text,text)', '{psd2_service}'),
		('bg_consent_authorisations(bytea,text,text,uuid,inet,uuid,uuid,uuid,boolean,uuid)', '{psd2_service}'),
		('bg_consent_cover(consent,bigint,text[])', '{psd2_service}'),
		('bg_consent_create(bytea,text,text,uuid,inet,uuid,uuid,text,jsonb,boolean,date,integer,text,text,boolean,integer,integer,text)', '{psd2_service}'),
		('bg_consent_decide(bytea,boolean,bytea,integer,bigint,text,uuid,uuid,text,text[],text,text,bytea,integer,uuid)', '{psd2_service}'),
		('bg_consent_delete(bytea,text,text,uuid,inet,uuid,uuid,uuid)', '{psd2_service}'),
		('bg_consent_gate(bytea,text,text,uuid,uuid)', '{psd2_service}'),
		('bg_consent_get(bytea,text,text,uuid,inet,uuid,uuid,uuid,text,integer)', '{psd2_service}'),
		('bg_consent_href(uuid)', '{psd2_service}'),
		('bg_consent_page(uuid,bigint)', '{psd2_service}'),
		('bg_consent_status(text,date,timestamp with time zone)', '{psd2_service,psd2_operator}'),
		('bg_consent_sweep()', '{psd2_service,psd2_operator}'),
		('bg_datetime(timestamp with time zone)', '{psd2_service}'),
		('bg_funds_confirmation(bytea,text,text,uuid,inet,uuid,uuid,text,text,bigint)', '{psd2_service}'),
		('bg_gate(bytea,text,text,uuid,uuid,text)', '{psd2_service}'),
		('bg_oauth_authorize(text,uuid)', '{psd2_service}'),
		('bg_redirect_unknown(text,text,text)', '{psd2_service}'),
		('bg_refused(bg_refusal,text)', '{psd2_service}'),
		('bg_sca_status(text,timestamp with time zone)', '{psd2_service}'),
		('bg_transaction_details(bytea,text,text,uuid,inet,uuid,uuid,integer,text,text)', '{psd2_service}'),
		('bg_transactions(bytea,text,text,uuid,inet,uuid,uuid,integer,text,text,date,date,boolean,integer,integer)', '{psd2_service}'),
		('consent_decide(bytea,boolean,bytea,integer,bigint,text,text[],text[],integer,text,text,bytea,integer,uuid,uuid)', '{psd2_service}'),
		('consent_flow_answered(bytea,bigint,bytea,integer,bytea)', '{psd2_service}'),
		('device_assign_break_glass(text,text,text,text)', '{psd2_operator}'),
		('device_assign_target(text,text)', '{}'),
		('device_assignable(device,bigint)', '{}'),
		('device_challenge_check()', '{}'),
		('device_challenge_finish_time()', '{}'),
		('device_challenge_notify()', '{}'),
		('device_enrol(text,text,bytea,text)', '{psd2_service,psd2_operator}'),
		('device_enrol_refused(text,text,text)', '{psd2_service,psd2_operator}'),
		('device_fail_open(text,text)', '{psd2_service,psd2_operator}'),
		('device_fingerprint(bytea)', '{psd2_service}'),
		('device_notify()', '{}'),
		('deviced_claim(text,integer,text,bytea)', '{psd2_daemon}'),
		('deviced_fail(uuid,text,text,boolean)', '{psd2_daemon}'),
		('deviced_finish(uuid,text,text,bigint,bytea)', '{psd2_daemon}'),
		('deviced_held(uuid,text)', '{}'),
		('deviced_lease(integer)', '{}'),
		('deviced_record(text,text,text,bytea,bytea,boolean,text)', '{psd2_daemon}'),
		('deviced_release_all(text,text)', '{psd2_daemon}'),
		('deviced_renew(text,integer)', '{psd2_daemon}'),
		('deviced_sweep()', '{psd2_daemon}'),
		('kpi_current_quarter()', '{psd2_service,psd2_operator}'),
		('kpi_downtime_s(text,timestamp with time zone,timestamp with time zone)', '{psd2_service,psd2_operator}'),
		('kpi_latency_bounds_ms()', '{psd2_service,psd2_operator}'),
		('kpi_minute_day_stale()', '{}'),
		('kpi_minute_record(text,jsonb)', '{psd2_service}'),
		('kpi_quarter_days(text)', '{psd2_service,psd2_operator}'),
		('kpi_report(date,date)', '{psd2_service,psd2_operator}'),
		('kpi_report_csv(text)', '{psd2_service,psd2_operator}'),
		('kpi_report_json(text)', '{psd2_service,psd2_operator}'),
		('kpi_rollup()', '{psd2_service}'),
		('login_factor(bigint,boolean,integer,integer,boolean)', '{psd2_service}'),
		('login_lookup(text,text,integer)', '{psd2_service}'),
		('login_totp_flow(bytea,bigint,bigint,integer,integer,bytea,integer,integer)', '{psd2_service}'),
		('oauth_client_active(text)', '{psd2_service}'),
		('oauth_client_credentials_grant(text,bytea,integer,text)', '{psd2_service}'),
		('oauth_code_grant(bytea,text,text,text,bytea,bytea,integer)', '{psd2_service}'),
		('oauth_code_grant_bound(bytea,text,text,text,bytea,bytea,integer,text)', '{psd2_service}'),
		('oauth_refresh_grant(bytea,text,bytea,bytea,integer)', '{psd2_service}'),
		('oauth_refresh_grant_bound(bytea,text,bytea,bytea,integer,text)', '{psd2_service}'),
		('oauth_revoke(bytea,text)', '{psd2_service}'),
		('oauth_scope_answer(consent,text[])', '{psd2_service}'),
		('operator_account_add(text,text,text,text,text,text)', '{psd2_operator}'),
		('operator_client_add(text,text,text,text,bytea,bytea,text,text[],boolean,integer)', '{psd2_operator}'),
		('operator_client_rehash(text,text,bytea,bytea,bytea,text)', '{psd2_operator}'),
		('operator_psu_add(text,text,text,text,text)', '{psd2_operator}'),
		('operator_psu_unlock(text,text)', '{psd2_operator}'),
		('operator_staff_add(text,text,text,text,text,text)', '{psd2_operator}'),
		('payment_notify()', '{}'),
		('pis_audit_confirmed(uuid,text,text,text,bigint)', '{psd2_service}'),
		('pis_audit_sca(uuid,text,text)', '{psd2_service}'),
		('pis_authorisation_json(text,uuid,uuid,text,text)', '{psd2_service}'),
		('pis_bearer_only(bytea,text)', '{psd2_service}'),
		('pis_book(uuid)', '{psd2_service}'),
		('pis_book_coded(uuid,boolean,bigint,text,text,text)', '{psd2_service}'),
		('pis_book_input(uuid)', '{psd2_service}'),
		('pis_candidates()', '{psd2_service}'),
		('pis_challenge_answered(uuid)', '{psd2_service}'),
		('pis_challenge_create(text,uuid,bytea,timestamp with time zone)', '{psd2_service}'),
		('pis_decide(uuid,uuid,text,text,text,text,bigint)', '{psd2_service}'),
		('pis_failure_reason(text)', '{psd2_service}'),
		('pis_initiate(bytea,text,text,uuid,inet,text,jsonb,bytea,boolean,text,text,integer,integer)', '{psd2_service}'),
		('pis_outcomes(integer)', '{psd2_service}'),
		('pis_payment(bytea,text,text,uuid,inet,text,uuid,text,uuid)', '{psd2_service}'),
		('pis_psu_device(bigint)', '{psd2_service}'),
		('pis_psu_message(text,text)', '{psd2_service}'),
		('pis_redirect_expire()', '{psd2_service}'),
		('pis_redirect_expire_one(uuid)', '{psd2_service}'),
		('pis_reject(uuid,text,text)', '{psd2_service}'),
		('pis_sca_redirect(uuid)', '{psd2_service}'),
		('pis_self(text,uuid)', '{psd2_service}'),
		('pis_sweep()', '{psd2_service}'),
		('pis_unbooked(integer)', '{psd2_service}'),
		('pis_wake(uuid)', '{psd2_service}'),
		('psd2_purge()', '{psd2_service,psd2_operator}'),
		('psd2_purge_ais()', '{psd2_service,psd2_operator}'),
		('psu_consent_revoke(bytea,integer,bigint,uuid)', '{psd2_service}'),
		('psu_consents(bytea,integer)', '{psd2_service}'),
		('psu_payment_authorise_page(bytea,integer,uuid)', '{psd2_service}'),
		('psu_payment_device(uuid,bigint,bytea,integer,bigint,text,text,text,bytea,text)', '{psd2_service}'),
		('psu_payment_login(bigint,boolean,integer,integer,bytea,integer,uuid)', '{psd2_service}'),
		('psu_payment_totp(uuid,bigint,bigint,integer,integer,bigint,text,text,text,bytea,text)', '{psd2_service}'),
		('psu_payment_totp_input(bytea,integer,uuid)', '{psd2_service}'),
		('psu_payments(bytea,integer)', '{psd2_service}'),
		('rate_hit(text,integer)', '{psd2_service}'),
		('sandbox_hash(text)', '{psd2_operator}'),
		('sandbox_seed_account(text,integer,bigint,text[])', '{psd2_operator}'),
		('sandbox_seed_data()', '{psd2_operator}'),
		('session_psu(bytea,integer)', '{psd2_service}'),
		('session_psu_payment(bytea,integer,uuid)', '{psd2_service}'),
		('staff_audit_json(text,text,bigint,integer)', '{psd2_service}'),
		('staff_client_add(text,text,text,bytea,bytea,text,text[],boolean,integer)', '{psd2_service,psd2_operator}'),
		('staff_consents_json(text,text,text,integer,integer)', '{psd2_service}'),
		('staff_detail_fields(jsonb)', '{psd2_service}'),
		('staff_device_action(text,text,text,text)', '{psd2_service,psd2_operator}'),
		('staff_device_confirm_json(text,text)', '{psd2_service}'),
		('staff_device_json(device)', '{psd2_service}'),
		('staff_devices_json(text,text,integer,integer)', '{psd2_service}'),
		('staff_list_page(text,jsonb,integer,integer)', '{psd2_service}'),
		('staff_login_factor(bigint,text,text,boolean,integer,integer,text)', '{psd2_service}'),
		('staff_login_lookup(text,text,integer)', '{psd2_service}'),
		('staff_login_totp(bigint,bigint,integer,integer,bytea,integer,text)', '{psd2_service}'),
		('staff_logout(bytea)', '{psd2_service}'),
		('staff_member_action(text,bigint,text,text)', '{psd2_service,psd2_operator}'),
		('staff_members_json(text,integer,integer)', '{psd2_service}'),
		('staff_psu_json(text)', '{psd2_service}'),
		('staff_psus_json(text)', '{psd2_service}'),
		('staff_session(bytea,integer)', '{psd2_service}'),
		('staff_tpp_register(text,text,text)', '{psd2_service}'),
		('staff_tpp_status(text,text,text)', '{psd2_service,psd2_operator}'),
		('staff_tpps_json(text,integer,integer)', '{psd2_service}'),
		('token_client(text,text,integer)', '{psd2_service}'),
		('token_issue(uuid,text,uuid,text[],bytea,bytea,integer)', '{psd2_service}'),
		('token_revoke_family(uuid)', '{psd2_service}');
	FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
	    WHERE p.pronamespace = 'public'::regnamespace LOOP
		EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', f);
		FOREACH r IN ARRAY v_roles LOOP
			EXECUTE format('REVOKE ALL ON FUNCTION %s FROM %I', f, r);
		END LOOP;
		IF NOT EXISTS (SELECT 1 FROM function_grant fg
		    WHERE fg.fn = f) THEN
			RAISE WARNING 'function % is in no grant of '
			    '99_grants.sql: only its owner may execute it', f;
		END IF;
	END LOOP;
	FOR g IN SELECT fg.fn, u.role FROM function_grant fg,
	    unnest(fg.roles) AS u(role) WHERE u.role = ANY (v_roles) LOOP
		EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', g.fn,
		    g.role);
	END LOOP;
END
$$;
