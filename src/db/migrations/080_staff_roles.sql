-- Bank staff portal (issue 10): every staff member has a role. operator:
-- authenticators, PSU look-up, audit reading; admin: also TPPs and staff
-- accounts. Existing staff rows become operators (the least power);
-- `psd2ctl staff add --role admin` or the sandbox seed names an admin.
ALTER TABLE staff ADD COLUMN role text NOT NULL DEFAULT 'operator'
    CHECK (role IN ('operator', 'admin'));
ALTER TABLE staff ADD COLUMN status text NOT NULL DEFAULT 'active'
    CHECK (status IN ('active', 'disabled'));
