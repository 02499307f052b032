-- Functions are not PUBLIC's to execute: every function gets EXECUTE
-- only as src/db/functions/99_grants.sql lists it (src/db/README.md,
-- "Who may execute what"). From now on a function that the owner (the
-- role running the migrations) creates gets no EXECUTE for PUBLIC, so a
-- function that a later migration adds is executable by no one but the
-- owner until 99_grants.sql grants it.
ALTER DEFAULT PRIVILEGES REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC;
