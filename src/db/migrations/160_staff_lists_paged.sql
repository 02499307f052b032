-- The staff lists are paged and filtered (src/db/functions/70_staff.sql):
-- their functions take a search and a page now, so the old signatures
-- go. IF EXISTS: on a new database the functions files have not run yet.
DROP FUNCTION IF EXISTS staff_devices_json(text, text);
DROP FUNCTION IF EXISTS staff_tpps_json();
DROP FUNCTION IF EXISTS staff_members_json();
