"""TPP registry pages (admin only): register a TPP and
an OAuth client (the secret shown once and stored keyed and salted: it
authenticates at the token endpoint), suspend (every token stops at once)
and reactivate, each an audit row; an operator is refused."""

import secrets

import pytest

import psd2lib
from psd2lib import Page, basic_auth, revoke_request
from staff_lib import (STAFF_URL, audit_max_id, browser_login, form_post,
                       http_login, wait_for)


def audit_actions(db, since, org_id):
    cur = db.cursor()
    cur.execute("SELECT actor, action FROM audit_log WHERE id > %s AND "
                "detail->>'org_id' = %s ORDER BY id", (since, org_id))
    return cur.fetchall()


def client_auth_ok(client_id, secret):
    r = revoke_request({"token": "no-such-token"},
                       auth=basic_auth(client_id, secret))
    return r.status_code == 200


def test_admin_registers_tpp_and_client_in_chromium(driver, admin, db):
    org = "PSDDE-BAFIN-%d" % secrets.randbelow(10 ** 9)
    client_id = "staff-" + secrets.token_hex(4)
    since = audit_max_id(db)
    browser_login(driver, admin)
    driver.find_element("id", "nav-tpps").click()
    wait_for(driver, "tpp-name").send_keys("Example <Fintech> GmbH")
    driver.find_element("id", "tpp-org").send_keys(org)
    driver.find_element("id", "tpp-register-submit").click()
    wait_for(driver, "staff_done_register")
    driver.get(STAFF_URL + "/staff/tpps")
    assert "Example <Fintech> GmbH" in wait_for(driver, "tpp-" + org).text
    driver.find_element("id", "client-org").send_keys(org)
    driver.find_element("id", "client-id").send_keys(client_id)
    driver.find_element("id", "client-uris").send_keys(
        "https://fintech.example/cb http://127.0.0.1:8000/callback")
    driver.find_element("id", "client-pkce").click()
    ttl = driver.find_element("id", "client-ttl")
    ttl.clear()
    ttl.send_keys("600")
    driver.find_element("id", "client-add-submit").click()
    secret = wait_for(driver, "new-client-secret").text.strip()
    assert len(secret) >= 32
    cur = db.cursor()
    cur.execute("SELECT redirect_uris, pkce_required, access_ttl, "
                "secret_salt IS NOT NULL, secret_key_id FROM oauth_client "
                "WHERE client_id = %s", (client_id,))
    uris, pkce, ttl_db, salted, key_id = cur.fetchone()
    assert uris == ["https://fintech.example/cb",
                    "http://127.0.0.1:8000/callback"]
    assert pkce is True and ttl_db == 600 and salted and key_id
    assert client_auth_ok(client_id, secret)
    assert not client_auth_ok(client_id, secret + "x")
    # shown once: the list never shows it again
    driver.get(STAFF_URL + "/staff/tpps")
    assert secret not in driver.page_source
    assert [a for _, a in audit_actions(db, since, org)] == [
        "tpp.register", "tpp.client_add"]


def test_suspend_stops_tokens_at_once_and_reactivate(admin, db,
                                                     client_factory,
                                                     psu_factory):
    client = client_factory()
    psu = psu_factory()
    code, _, _, _ = psd2lib.run_code_flow(client, psu)
    r = psd2lib.exchange_code(client, code)
    assert r.status_code == 200
    refresh = r.json()["refresh_token"]
    since = audit_max_id(db)
    sess = http_login(admin)
    r = sess.get(STAFF_URL + "/staff/tpps/confirm",
                 params={"org_id": client.org_id, "op": "suspend"})
    assert r.status_code == 200
    cur = db.cursor()
    cur.execute("SELECT status FROM tpp WHERE org_id = %s", (client.org_id,))
    assert cur.fetchone()[0] == "active"      # nothing before confirming
    r = form_post(sess, Page(r.text), "confirm-form", {})
    assert r.status_code == 200 and "staff_done_suspend" in r.text
    cur.execute("SELECT count(*) FROM token WHERE client_id = %s AND "
                "revoked_at IS NULL", (client.client_id,))
    assert cur.fetchone()[0] == 0
    r = psd2lib.token_request({"grant_type": "refresh_token",
                               "refresh_token": refresh}, client)
    assert r.status_code in (400, 401)
    r = sess.get(STAFF_URL + "/staff/tpps/confirm",
                 params={"org_id": client.org_id, "op": "activate"})
    r = form_post(sess, Page(r.text), "confirm-form", {})
    assert r.status_code == 200 and "staff_done_activate" in r.text
    assert [a for _, a in audit_actions(db, since, client.org_id)] == [
        "tpp.suspend", "tpp.activate"]


def test_operator_is_refused_the_tpp_pages(operator, admin, db):
    org = "PSDDE-BAFIN-%d" % secrets.randbelow(10 ** 9)
    sess = http_login(operator)
    assert sess.get(STAFF_URL + "/staff/tpps").status_code == 403
    assert sess.get(STAFF_URL + "/staff/tpps/confirm", params={
        "org_id": org, "op": "suspend"}).status_code == 403
    # with a valid CSRF token of the operator's own session
    csrf = Page(sess.get(STAFF_URL + "/staff/home").text).form(
        "logout-form").hidden()["csrf"]
    r = sess.post(STAFF_URL + "/staff/tpps/action", data={
        "csrf": csrf, "op": "register", "name": "X", "org_id": org},
        allow_redirects=False)
    assert r.status_code == 403
    cur = db.cursor()
    cur.execute("SELECT count(*) FROM tpp WHERE org_id = %s", (org,))
    assert cur.fetchone()[0] == 0
    home = sess.get(STAFF_URL + "/staff/home").text
    assert 'id="nav-tpps"' not in home
    assert 'id="nav-tpps"' in http_login(admin).get(
        STAFF_URL + "/staff/home").text


def test_bad_input_changes_nothing(admin, db):
    sess = http_login(admin)
    page = Page(sess.get(STAFF_URL + "/staff/tpps").text)
    r = form_post(sess, page, "tpp-register", {"name": "X",
                                               "org_id": "not-an-org"})
    assert r.status_code == 409 and "staff_result_bad_input" in r.text
    r = form_post(sess, page, "client-add", {
        "org_id": "PSDDE-BAFIN-none", "client_id": "c1",
        "redirect_uris": "https://a.example/cb"})
    assert r.status_code == 409 and "staff_result_no_tpp" in r.text


@pytest.mark.parametrize("uris", [
    "http://tpp.example/cb",
    "https://a.example/cb http://127.0.0.1.evil.example/cb",
    "https://a.example/cb#frag",
])
def test_a_redirect_uri_a_client_may_not_have_is_refused(admin, db,
                                                         client_factory,
                                                         uris):
    """https, or http on the loopback outside production
    (src/common/redirect_uri.h): anything else adds no client."""
    org = client_factory().org_id
    client_id = "c-" + secrets.token_hex(4)
    sess = http_login(admin)
    page = Page(sess.get(STAFF_URL + "/staff/tpps").text)
    r = form_post(sess, page, "client-add", {
        "org_id": org, "client_id": client_id, "redirect_uris": uris})
    assert r.status_code == 400, r.text[:500]
    cur = db.cursor()
    cur.execute("SELECT count(*) FROM oauth_client WHERE client_id = %s",
                (client_id,))
    assert cur.fetchone()[0] == 0
    r = form_post(sess, Page(sess.get(STAFF_URL + "/staff/tpps").text),
                  "client-add", {"org_id": org, "client_id": client_id,
                                 "redirect_uris":
                                 "http://127.0.0.1:8000/cb"})
    assert r.status_code == 200, r.text[:500]
    cur.execute("SELECT redirect_uris FROM oauth_client WHERE "
                "client_id = %s", (client_id,))
    assert cur.fetchone()[0] == ["http://127.0.0.1:8000/cb"]


def test_psd2ctl_writes_the_same_audit_rows_naming_the_operator(
        db, client_factory):
    import getpass
    actor = "operator:" + getpass.getuser()
    since = audit_max_id(db)
    client = client_factory()
    psd2lib.psd2ctl("tpp", "suspend", client.org_id)
    psd2lib.psd2ctl("tpp", "activate", client.org_id)
    assert audit_actions(db, since, client.org_id) == [
        (actor, "tpp.register"), (actor, "tpp.client_add"),
        (actor, "tpp.suspend"),
        (actor, "tpp.activate")]
    name = psd2lib.unique("st")
    psd2lib.psd2ctl("staff", "add", name, "--role", "admin")
    cur = db.cursor()
    cur.execute("SELECT actor, detail FROM audit_log WHERE id > %s AND "
                "action = 'staff.add' AND detail->>'username' = %s",
                (since, name))
    assert cur.fetchall() == [(actor, {"username": name, "role": "admin"})]


def test_psd2ctl_suspend_is_one_transaction_with_its_audit_row(
        db, client_factory, psu_factory):
    """A suspension whose audit row cannot be written changes nothing: no
    suspended TPP, no revoked token, without the row that says who did
    it. The fault: the audit row's INSERT fails (a trigger of the test)."""
    client = client_factory()
    code, _, _, _ = psd2lib.run_code_flow(client, psu_factory())
    assert psd2lib.exchange_code(client, code).status_code == 200
    cur = db.cursor()
    fn = "test_refuse_" + secrets.token_hex(4)
    cur.execute("CREATE FUNCTION %s() RETURNS trigger LANGUAGE plpgsql AS "
                "$$BEGIN IF NEW.action = 'tpp.suspend' AND "
                "NEW.detail->>'org_id' = '%s' THEN RAISE EXCEPTION "
                "'audit row refused by the test'; END IF; RETURN NEW; "
                "END$$" % (fn, client.org_id))
    cur.execute("CREATE TRIGGER %s BEFORE INSERT ON audit_log FOR EACH ROW "
                "EXECUTE FUNCTION %s()" % (fn, fn))
    try:
        p = psd2lib.psd2ctl("tpp", "suspend", client.org_id, check=False)
    finally:
        cur.execute("DROP TRIGGER %s ON audit_log" % fn)
        cur.execute("DROP FUNCTION %s()" % fn)
    assert p.returncode == 1 and "refused by the test" in p.stderr
    cur.execute("SELECT status FROM tpp WHERE org_id = %s",
                (client.org_id,))
    assert cur.fetchone() == ("active",)
    cur.execute("SELECT count(*) FROM token WHERE client_id = %s AND "
                "revoked_at IS NULL", (client.client_id,))
    assert cur.fetchone()[0] == 2
    since = audit_max_id(db)
    psd2lib.psd2ctl("tpp", "suspend", client.org_id)
    cur.execute("SELECT detail FROM audit_log WHERE id > %s AND "
                "action = 'tpp.suspend'", (since,))
    assert cur.fetchall() == [({"org_id": client.org_id,
                                "tokens_revoked": 2},)]


def test_the_list_shows_how_each_client_authenticates(admin, client_factory,
                                                      tmp_path):
    """A client's method, its public keys, PAR and refresh rotation, as
    psd2ctl set them (the settings of FAPI 2.0)."""
    import json
    from tpp_keys import new_key, public_jwk
    c = client_factory()
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps({"keys": [public_jwk(new_key("EdDSA"), "a"),
                                         public_jwk(new_key("ES256"), "b")]}))
    for args in (("jwks", c.client_id, str(path)),
                 ("auth-method", c.client_id, "private_key_jwt"),
                 ("par-required", c.client_id, "on"),
                 ("refresh-rotation", c.client_id, "off")):
        psd2lib.psd2ctl("tpp", *args)
    sess = http_login(admin)
    r = sess.get(STAFF_URL + "/staff/tpps", params={"q": c.org_id})
    assert r.status_code == 200, r.text[:300]
    start = r.text.index("<code>%s</code>" % c.client_id)
    item = r.text[start:r.text.index("</li>", start)]
    assert "authenticates by <code>private_key_jwt</code>, 2 public keys" \
        in item, item
    assert "PAR required" in item and "refresh token rotation off" in item
    other = client_factory()
    r = sess.get(STAFF_URL + "/staff/tpps", params={"q": other.org_id})
    start = r.text.index("<code>%s</code>" % other.client_id)
    item = r.text[start:r.text.index("</li>", start)]
    assert "<code>client_secret_basic</code>, 0 public keys" in item
    assert "PAR optional" in item and "refresh token rotation on" in item
