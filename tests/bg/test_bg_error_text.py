"""Every refusal keeps the documented body shape, whatever the TPP sent:
an error text that quotes a member name the TPP chose, cut to its first
40 bytes inside a UTF-8 sequence, is not a JSON string; the one exit
(src/api/respond.c) then answers with a plain text instead of dropping
it."""

from test_bg_consents import Tpp, consent_body, iban  # noqa: F401
from test_bg_consents import tpp  # noqa: F401 (the fixture)


def test_text_cut_inside_a_character_keeps_the_shape(tpp):  # noqa: F811
    # 20 euro signs are 60 bytes: 40 of them end inside the 14th sign
    key = "\u20ac" * 20
    body = consent_body({"accounts": [{"iban": iban(), key: "x"}]})
    # valid for the official file (account references may carry more
    # members); psd2gate takes iban and currency only
    r = tpp.create(body)
    assert r.status_code == 400, r.text
    m = r.json()["tppMessages"][0]
    assert m["code"] == "FORMAT_ERROR"
    assert m["path"] == "access.accounts[0]"
    assert isinstance(m["text"], str) and m["text"]
