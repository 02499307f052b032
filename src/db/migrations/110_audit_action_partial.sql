-- Payment confirmations' audit rows (action payment.sca, most of the log
-- under load) no longer go into the action index (issue 10, "Figures").
-- Each confirmation inserted its row into four btrees at their right-most
-- pages (the PK, actor, action; the psu index is partial already), under
-- commits that the NOTIFY of the decision serialises. The action filter
-- does not need them there: `action = 'payment.sca'` (psd2ctl audit list)
-- finds them newest first on the PK, as they are most rows, and any other
-- action keeps its index (the planner proves `action = $1` with $1 not
-- payment.sca implies the predicate). The staff page's prefix filter
-- (starts_with) never used this index.
DROP INDEX audit_log_action;
CREATE INDEX audit_log_action ON audit_log (action, id)
    WHERE action <> 'payment.sca';
