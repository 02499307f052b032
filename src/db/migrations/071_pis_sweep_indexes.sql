-- 071_pis_sweep_indexes: what the decider's sweeps (pis_sweep,
-- pis_outcomes in src/db/functions/60_pis.sql) look for, found by index
-- rather than by scanning every payment still RCVD (redirect payments a
-- PSU never authorised stay RCVD; their number only grows):
--	device authorisations whose deadline passed (SCA not final; a
--	redirect authorisation without a device is not in the index)
--	challenges that ended recently (an outcome or a failure to decide)
-- Run inside the migration runner's transaction (no BEGIN/COMMIT here).

CREATE INDEX payment_authorisation_open ON payment_authorisation (deadline)
	WHERE sca_status IN ('received', 'started') AND method = 'device';

CREATE INDEX device_challenge_finished ON device_challenge (finished_at)
	WHERE status IN ('done', 'failed', 'cancelled');
