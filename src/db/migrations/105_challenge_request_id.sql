-- The request id of the payment initiation that created a challenge
-- (issue 11): psd2-deviced names it in every line about the challenge, so
-- one request can be followed from the service's log through PostgreSQL
-- to the daemon's. Nullable: challenges made before this migration, and
-- made by hand (tests, operators), have none.
ALTER TABLE device_challenge ADD COLUMN request_id uuid;
