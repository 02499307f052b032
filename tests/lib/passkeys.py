"""What the tests of passkeys and security keys (WebAuthn) share, in
Chromium with its virtual authenticator (WebDriver's, CTAP2 over USB):
the origin where psd2gate offers keys (psd2_webauthn_origin of
conf/test.conf: Chromium refuses WebAuthn on 127.0.0.1), the PSU's keys
page, copies of a key, and a key form's fields kept instead of posted."""

import base64

from selenium.webdriver.common.by import By
from selenium.webdriver.common.virtual_authenticator import (
    Credential, VirtualAuthenticatorOptions)
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

from psd2lib import MAIN_URL, click_and_wait

ORIGIN = MAIN_URL.replace("127.0.0.1", "localhost")
KEYS_URL = ORIGIN + "/auth/keys"
# An origin Chromium accepts for rp id "localhost" that is not the bank's:
# the TPP callback server of conftest.py.
OTHER_ORIGIN = "http://localhost:8000"


def wait_id(d, ident, timeout=20):
    return WebDriverWait(d, timeout).until(
        EC.presence_of_element_located((By.ID, ident)))


def wait_visible(d, ident, timeout=20):
    return WebDriverWait(d, timeout).until(
        EC.visibility_of_element_located((By.ID, ident)))


def fill(d, name, value):
    el = d.find_element(By.NAME, name)
    el.clear()
    el.send_keys(value)


def raw(text):
    """Bytes of Selenium's base64url text of a credential's id or key."""
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def copy_key(d, cred, sign_count):
    """cred's key in the browser's current authenticator, with a counter
    of sign_count: a copy of the same private key."""
    d.add_credential(Credential.create_non_resident_credential(
        raw(cred.id), "localhost", raw(cred.private_key), sign_count))


def authenticator(d, uv=True, verified=True, resident=True):
    return d.add_virtual_authenticator(VirtualAuthenticatorOptions(
        has_resident_key=resident, has_user_verification=uv,
        is_user_verified=verified))


def password(d, psu):
    wait_id(d, "login-form")
    fill(d, "username", psu.username)
    fill(d, "password", psu.password)
    click_and_wait(d, d.find_element(By.ID, "login-submit"))
    wait_id(d, "otp-form")


def keys_page(d, psu):
    """The PSU's keys page after a login with password and TOTP."""
    d.get(KEYS_URL)
    password(d, psu)
    fill(d, "otp", psu.totp())
    click_and_wait(d, d.find_element(By.ID, "otp-submit"))
    wait_id(d, "keys")


def add_key(d, name):
    wait_visible(d, "key-add")
    fill(d, "name", name)
    click_and_wait(d, d.find_element(By.ID, "key-add-submit"))



def capture_key_form(d, button="key-submit"):
    """Makes the key forms keep their fields in window.posted instead of
    posting them, and returns them once the key has answered."""
    d.execute_script(
        "HTMLFormElement.prototype.submit = function () {"
        " window.posted = Object.fromEntries(new FormData(this)); };")
    d.find_element(By.ID, button).click()
    return WebDriverWait(d, 20).until(
        lambda drv: drv.execute_script("return window.posted || null"))
