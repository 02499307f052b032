"""A burst of PSU logins (the password step: one argon2id hash each in a
Kore task) against BASE: COUNT bench PSUs, CONCURRENCY at a time. Prints
"RESULT <logins per second> <p99 ms> <failed> 0" like report.lua; a
login counts only if the service answers with the TOTP form.

usage: login_burst.py BASE COUNT CONCURRENCY PASSWORD
"""

import concurrent.futures
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import psd2lib  # noqa: E402

base, count, conc, password = sys.argv[1], int(sys.argv[2]), \
    int(sys.argv[3]), sys.argv[4]


def login(i):
    b = psd2lib.PsuBrowser(base=base)
    b.get(psd2lib.authorize_url(base, "sandbox-tpp",
                                "http://127.0.0.1:8000/callback",
                                "ACCOUNT_INFORMATION", "burst%d" % i))
    t = time.monotonic()
    r = b.submit_login("bench-psu-%05d" % (i + 1), password)
    took = time.monotonic() - t
    ok = r.status_code == 200 and b.page is not None and \
        b.page.form("otp-form") is not None
    return ok, took


start = time.monotonic()
with concurrent.futures.ThreadPoolExecutor(conc) as ex:
    results = list(ex.map(login, range(count)))
secs = time.monotonic() - start
lat = sorted(t for _, t in results)
p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000
bad = sum(1 for ok, _ in results if not ok)
print("RESULT %.0f %.2f %d 0" % ((count - bad) / secs, p99, bad))
