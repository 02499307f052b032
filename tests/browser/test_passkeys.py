"""Passkeys and security keys (WebAuthn) as the PSU's second element, in
headless Chromium with its virtual authenticator (WebDriver's, CTAP2 over
USB): a PSU registers a key on /auth/keys, then logs in with password and
key instead of the TOTP code. Refused: a key that does not verify the
user, an assertion for another origin, a replayed assertion, a cloned key
(its counter going back) and a removed key. The keys are offered on
http://localhost:18080 (psd2_webauthn_origin of conf/test.conf): Chromium
refuses WebAuthn on 127.0.0.1."""

import urllib.parse

import pytest
import requests
from selenium.webdriver.common.by import By

import psd2lib
from psd2lib import MAIN_URL, click_and_wait
from conftest import CALLBACK
from passkeys import (KEYS_URL, ORIGIN, OTHER_ORIGIN, add_key,
                      authenticator, capture_key_form, copy_key, fill,
                      keys_page, password, wait_id, wait_visible)

def status(d):
    return d.execute_script(
        "return performance.getEntriesByType('navigation')[0]"
        ".responseStatus")


def query(dbinfo, sql, *args):
    c = psd2lib.db_connect(dbinfo)
    try:
        cur = c.cursor()
        cur.execute(sql, args)
        return cur.fetchall()
    finally:
        c.close()


def audit(dbinfo, psu, action):
    return [r[0] for r in query(
        dbinfo, "SELECT detail FROM audit_log WHERE actor = %s "
        "AND action = %s ORDER BY id", "psu:" + psu.username, action)]


def oauth_login_url(client):
    q = urllib.parse.urlencode({
        "response_type": "code", "client_id": client.client_id,
        "redirect_uri": CALLBACK, "scope": "ACCOUNT_INFORMATION",
        "state": "passkey", "code_challenge_method": "S256",
        "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"})
    return ORIGIN + "/auth/oauth/authorize?" + q


def key_step(d, client, psu, keep_cookies=False):
    """A login of psu for client (in a fresh browser, unless it is to
    keep its cookies), up to the TOTP page, whose key form the browser
    shows."""
    if not keep_cookies:
        d.delete_all_cookies()
    d.get(oauth_login_url(client))
    password(d, psu)
    return wait_visible(d, "key-form")


def use_key(d, then):
    """Signs in with the key; waits for the page with id then."""
    click_and_wait(d, d.find_element(By.ID, "key-submit"))
    wait_id(d, then)


def post_key_form(d, fields, cookies=None):
    """Posts fields to the key step from a fresh client holding this
    browser's pre-login cookie (the form's CSRF binding; read on a page
    under its path, or given), not its session."""
    jar = {c["name"]: c["value"] for c in (cookies or d.get_cookies())
           if c["name"] == "psd2_pre"}
    return requests.post(ORIGIN + "/auth/login/key", data=fields,
                         cookies=jar, allow_redirects=False, timeout=30)


@pytest.fixture
def cb_client(client_factory):
    return client_factory(redirect_uris=[CALLBACK])


@pytest.fixture
def keyed(driver, psu_factory, dbinfo):
    """A PSU with one key registered in the browser's authenticator."""
    psu = psu_factory()
    authenticator(driver)
    keys_page(driver, psu)
    assert driver.find_elements(By.ID, "keys-none")
    add_key(driver, "Laptop")
    wait_id(driver, "keys")
    assert "Laptop" in driver.find_element(By.ID, "keys").text
    # The AAGUID as the browser gave it: with attestation "none" it
    # blanks the model (WebAuthn 5.4.3), and it is stored as such, not
    # reshaped into a random UUID's version and variant.
    assert query(dbinfo, "SELECT k.aaguid::text FROM psu_key k JOIN psu p "
                 "ON p.id = k.psu_id WHERE p.username = %s",
                 psu.username) == [("00000000-0000-0000-0000-000000000000",)]
    return psu


def test_register_list_and_login_with_key(driver, keyed, cb_client,
                                          callback_server, dbinfo):
    psu = keyed
    rows = query(dbinfo, "SELECT k.alg, k.name, k.sign_count, "
                 "length(k.public_key) FROM psu_key k JOIN psu p "
                 "ON p.id = k.psu_id WHERE p.username = %s", psu.username)
    assert rows == [(-7, "Laptop", rows[0][2], 64)]
    added = audit(dbinfo, psu, "psu.key_added")
    assert len(added) == 1 and added[0]["name"] == "Laptop"
    key_step(driver, cb_client, psu)
    use_key(driver, "consent-form")
    logins = audit(dbinfo, psu, "psu.login")
    assert logins[-1]["factor"] == "key"
    used = query(dbinfo, "SELECT k.sign_count, k.last_used_at IS NOT NULL "
                 "FROM psu_key k JOIN psu p ON p.id = k.psu_id "
                 "WHERE p.username = %s", psu.username)
    assert used[0][0] > rows[0][2] and used[0][1]


def test_keys_page_lists_and_removes(driver, keyed, cb_client, dbinfo):
    psu = keyed
    # The same authenticator again: the page excludes the key it holds
    # (excludeCredentials), so the browser makes none and says so.
    wait_visible(driver, "key-add")
    fill(driver, "name", "Again")
    driver.find_element(By.ID, "key-add-submit").click()
    wait_visible(driver, "key-add-error")
    assert len(driver.find_elements(By.CLASS_NAME, "key")) == 1
    # Another authenticator: a second key.
    driver.remove_virtual_authenticator()
    authenticator(driver)
    driver.get(KEYS_URL)
    add_key(driver, "Phone")
    names = [e.text for e in driver.find_elements(By.CLASS_NAME,
                                                   "key-name")]
    assert names == ["Laptop", "Phone"]
    first = driver.find_element(By.CSS_SELECTOR, "form.key-remove button")
    click_and_wait(driver, first)
    wait_id(driver, "keys")
    names = [e.text for e in driver.find_elements(By.CLASS_NAME,
                                                   "key-name")]
    assert names == ["Phone"]
    removed = audit(dbinfo, psu, "psu.key_removed")
    assert len(removed) == 1 and removed[0]["why"] == "psu"


def test_removed_key_no_longer_signs_in(driver, keyed, cb_client, dbinfo):
    psu = keyed
    key_step(driver, cb_client, psu, keep_cookies=True)
    fields = capture_key_form(driver)
    driver.get(KEYS_URL)
    wait_id(driver, "keys")
    click_and_wait(driver, driver.find_element(
        By.CSS_SELECTOR, "form.key-remove button"))
    wait_id(driver, "keys-none")
    r = post_key_form(driver, fields)
    assert r.status_code == 401, r.text
    assert "psd2_session" not in r.cookies
    driver.delete_all_cookies()
    driver.get(oauth_login_url(cb_client))
    password(driver, psu)
    assert not driver.find_elements(By.ID, "key-form")
    failed = audit(dbinfo, psu, "psu.login_failed")
    assert failed[-1] == {"factor": "key", "outcome": "failed"}


def test_key_without_user_verification_is_refused(driver, psu_factory,
                                                   dbinfo):
    psu = psu_factory()
    # A security key without a PIN: it makes keys, but cannot verify.
    authenticator(driver, uv=False, verified=False, resident=False)
    keys_page(driver, psu)
    add_key(driver, "No PIN")
    assert status(driver) == 400
    assert driver.find_element(By.ID, "keys_refused")
    assert not query(dbinfo, "SELECT 1 FROM psu_key k JOIN psu p "
                     "ON p.id = k.psu_id WHERE p.username = %s",
                     psu.username)


def test_login_without_user_verification_is_refused(driver, keyed,
                                                    cb_client, dbinfo):
    psu = keyed
    auth_id = driver.virtual_authenticator_id
    creds = driver.get_credentials()
    driver.remove_virtual_authenticator()
    # The same key in an authenticator that cannot verify the user.
    authenticator(driver, uv=False, verified=False)
    copy_key(driver, creds[0], creds[0].sign_count + 1)
    assert driver.virtual_authenticator_id != auth_id
    key_step(driver, cb_client, psu)
    use_key(driver, "otp-form")
    assert status(driver) == 401
    assert audit(dbinfo, psu, "psu.login_failed")[-1] == \
        {"factor": "key", "outcome": "failed"}


def test_assertion_for_another_origin_is_refused(driver, keyed, cb_client,
                                                 callback_server, dbinfo):
    psu = keyed
    form = key_step(driver, cb_client, psu)
    fields = {e.get_attribute("name"): e.get_attribute("value")
              for e in form.find_elements(By.TAG_NAME, "input")}
    challenge = form.get_attribute("data-challenge")
    ids = form.get_attribute("data-ids")
    pre = [c for c in driver.get_cookies() if c["name"] == "psd2_pre"]
    # A page of another origin on the same host asks the key for the
    # bank's challenge (Chromium allows rp id "localhost" there).
    driver.get(OTHER_ORIGIN + "/elsewhere")
    got = driver.execute_async_script("""
        const [challenge, ids, done] = arguments;
        const bytes = t => Uint8Array.from(atob(t.replace(/-/g, '+')
            .replace(/_/g, '/')), c => c.charCodeAt(0));
        const b64 = b => btoa(String.fromCharCode(...new Uint8Array(b)))
            .replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
        navigator.credentials.get({publicKey: {challenge: bytes(challenge),
            rpId: 'localhost', userVerification: 'preferred',
            allowCredentials: JSON.parse(ids).map(id => ({type:
                'public-key', id: bytes(id)}))}})
        .then(c => done({credential_id: b64(c.rawId),
            client_data: b64(c.response.clientDataJSON),
            authenticator_data: b64(c.response.authenticatorData),
            signature: b64(c.response.signature)}),
            e => done({error: String(e)}));
        """, challenge, ids)
    assert "error" not in got, got
    fields.update(got)
    r = post_key_form(driver, fields, pre)
    assert r.status_code == 401, r.text
    assert "psd2_session" not in r.cookies
    assert audit(dbinfo, psu, "psu.login_failed")[-1] == \
        {"factor": "key", "outcome": "failed"}


def test_replayed_assertion_is_refused(driver, keyed, cb_client, dbinfo):
    psu = keyed
    key_step(driver, cb_client, psu)
    fields = capture_key_form(driver)
    # The genuine post opens the session.
    r = post_key_form(driver, fields)
    assert r.status_code == 200 and "psd2_session" in r.cookies, r.text
    sessions = query(dbinfo, "SELECT count(*) FROM web_session s JOIN psu p "
                     "ON p.id = s.subject_id WHERE s.subject_kind = 'psu' "
                     "AND p.username = %s", psu.username)[0][0]
    # The same assertion again: no second session, no cookie.
    r = post_key_form(driver, fields)
    assert r.status_code == 401 and "psd2_session" not in r.cookies
    assert query(dbinfo, "SELECT count(*) FROM web_session s JOIN psu p "
                 "ON p.id = s.subject_id WHERE s.subject_kind = 'psu' "
                 "AND p.username = %s", psu.username)[0][0] == sessions
    # And in another login flow: a challenge of another page.
    form = key_step(driver, cb_client, psu)
    for name in ("authreq", "csrf", "step"):
        fields[name] = form.find_element(
            By.NAME, name).get_attribute("value")
    r = post_key_form(driver, fields)
    assert r.status_code == 401 and "psd2_session" not in r.cookies


def test_cloned_key_is_refused_and_removed(driver, keyed, cb_client,
                                           dbinfo):
    psu = keyed
    # One login with the key moves its counter on.
    key_step(driver, cb_client, psu)
    use_key(driver, "consent-form")
    cred = driver.get_credentials()[0]
    assert cred.sign_count >= 1
    # A copy of the key that was taken before: the counter goes back.
    driver.remove_virtual_authenticator()
    authenticator(driver)
    copy_key(driver, cred, 0)
    key_step(driver, cb_client, psu)
    use_key(driver, "otp-form")
    assert status(driver) == 401
    row = query(dbinfo, "SELECT k.removed_why FROM psu_key k JOIN psu p "
                "ON p.id = k.psu_id WHERE p.username = %s", psu.username)
    assert row == [("counter",)]
    removed = audit(dbinfo, psu, "psu.key_removed")
    assert removed[-1]["why"] == "counter"
    assert removed[-1]["presented"] <= removed[-1]["stored"]


def test_keys_are_offered_on_the_configured_origin_only(driver, keyed,
                                                        cb_client):
    psu = keyed
    driver.get(MAIN_URL + "/auth/oauth/authorize?" +
               oauth_login_url(cb_client).split("?", 1)[1])
    password(driver, psu)
    wait_visible(driver, "key-form-elsewhere")
    assert not driver.find_element(By.ID, "key-form").is_displayed()
    assert ORIGIN in driver.find_element(By.ID,
                                         "key-form-elsewhere").text
