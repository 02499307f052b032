"""The PSU revokes a consent on /auth/consents in headless Chromium
(Selenium): login with password and TOTP, the list, the revoke button;
the TPP's token stops working at once."""

import pytest
# Selenium is a dependency (tests/deps.sh: python3-selenium): without it
# this suite fails at import, it does not skip.
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

import psd2lib
from conftest import ACCOUNT_LIST, bearer_401, consent_of, get_tokens, sql


@pytest.fixture
def driver():
    d = psd2lib.chromium()
    yield d
    psd2lib.quit_chromium(d)


def test_browser_revoke(driver, api, db, service_setup, server):
    psu = psd2lib.make_psu(n_accounts=2)
    tok = get_tokens(psd2lib.sandbox_client(), psu)
    consent = consent_of(db, tok["access_token"])
    assert api.get(ACCOUNT_LIST, tok["access_token"]).status_code == 200

    driver.get(server.url + "/auth/consents")
    driver.find_element(By.ID, "username").send_keys(psu.username)
    driver.find_element(By.ID, "password").send_keys(psu.password)
    driver.find_element(By.ID, "login-submit").click()
    # The password is checked in a task (argon2): slow under the sanitizer
    # build; wait for the TOTP page.
    WebDriverWait(driver, 20).until(
        lambda d: d.find_elements(By.NAME, "otp"))
    driver.find_element(By.NAME, "otp").send_keys(psu.totp())
    driver.find_element(By.CSS_SELECTOR,
                        "#otp-form button[type=submit]").click()
    WebDriverWait(driver, 20).until(
        lambda d: d.find_elements(By.ID, "consent-%s" % consent))
    assert driver.current_url.endswith("/auth/consents")
    item = driver.find_element(By.ID, "consent-%s" % consent)
    assert psd2lib.SANDBOX_TPP_NAME in item.text
    assert psu.accounts[0][0] in item.text
    driver.find_element(By.ID, "revoke-button-%s" % consent).click()
    # The revoke posts and redirects back: wait for the new page, not the
    # old one still on screen (slow under the sanitizer build). An element
    # found on the old page goes stale when the new one replaces it: read
    # again, then.
    WebDriverWait(driver, 20, ignored_exceptions=(
        StaleElementReferenceException,)).until(
        lambda d: d.find_elements(By.ID, "consent-%s" % consent) and
        "revoked by you" in d.find_element(
            By.ID, "consent-%s" % consent).text)
    item = driver.find_element(By.ID, "consent-%s" % consent)
    assert "revoked by you" in item.text
    assert not driver.find_elements(By.ID, "revoke-button-%s" % consent)
    assert sql(db, "SELECT status FROM consent WHERE id = %s",
               consent)[0][0] == "revokedByPsu"
    bearer_401(api.get(ACCOUNT_LIST, tok["access_token"]),
               "Invalid access token: " + tok["access_token"])
