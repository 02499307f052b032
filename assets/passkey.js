/*
 * Passkeys and security keys (WebAuthn Level 2) on the PSU's pages. A
 * form with data-passkey="get" (the login's key step) or "create" (a new
 * key) is shown only where the browser offers WebAuthn on the bank's
 * configured origin; its hidden fields receive the authenticator's
 * answer in base64url, and the server checks everything again.
 */
(function () {
	'use strict';

	function b64url(buf) {
		var bytes = new Uint8Array(buf), s = '', i;

		for (i = 0; i < bytes.length; i++)
			s += String.fromCharCode(bytes[i]);
		return btoa(s).replace(/\+/g, '-').replace(/\//g, '_')
		    .replace(/=+$/, '');
	}

	function bytes(text) {
		var s, out, i;

		text = text.replace(/-/g, '+').replace(/_/g, '/');
		while (text.length % 4 !== 0)
			text += '=';
		s = atob(text);
		out = new Uint8Array(s.length);
		for (i = 0; i < s.length; i++)
			out[i] = s.charCodeAt(i);
		return out;
	}

	function field(form, name, value) {
		form.querySelector('input[name="' + name + '"]').value = value;
	}

	function failed(form, err) {
		var p = document.getElementById(form.id + '-error');

		if (p === null)
			return;
		p.textContent = p.getAttribute(err && err.name ===
		    'NotAllowedError' ? 'data-cancelled' : 'data-failed');
		p.hidden = false;
	}

	function descriptors(ids) {
		return ids.map(function (id) {
			return { type: 'public-key', id: bytes(id) };
		});
	}

	/* WebAuthn 5.5: the login's key step. */
	function get(form) {
		var ids = JSON.parse(form.getAttribute('data-ids'));

		return navigator.credentials.get({ publicKey: {
			challenge: bytes(form.getAttribute('data-challenge')),
			rpId: form.getAttribute('data-rp'),
			allowCredentials: descriptors(ids),
			userVerification: 'preferred',
			timeout: 120000
		} }).then(function (cred) {
			field(form, 'credential_id', b64url(cred.rawId));
			field(form, 'client_data',
			    b64url(cred.response.clientDataJSON));
			field(form, 'authenticator_data',
			    b64url(cred.response.authenticatorData));
			field(form, 'signature', b64url(cred.response.signature));
			form.submit();
		});
	}

	/*
	 * WebAuthn 5.4: a new key. A PSU's key needs no attestation; a
	 * staff key's ("direct") names its maker, which the server checks.
	 */
	function create(form) {
		var o = JSON.parse(form.getAttribute('data-offer'));

		return navigator.credentials.create({ publicKey: {
			challenge: bytes(o.challenge),
			rp: { id: o.rp_id, name: form.getAttribute('data-bank') },
			user: { id: bytes(o.user), name: o.username,
			    displayName: o.username },
			pubKeyCredParams: [
				{ type: 'public-key', alg: -7 },
				{ type: 'public-key', alg: -8 },
				{ type: 'public-key', alg: -257 }
			],
			excludeCredentials: descriptors(o.exclude),
			authenticatorSelection: { residentKey: 'preferred',
			    userVerification: 'preferred' },
			attestation: o.attestation || 'none',
			timeout: 120000
		} }).then(function (cred) {
			field(form, 'client_data',
			    b64url(cred.response.clientDataJSON));
			field(form, 'attestation',
			    b64url(cred.response.attestationObject));
			form.submit();
		});
	}

	function origin(form) {
		if (form.getAttribute('data-passkey') === 'get')
			return form.getAttribute('data-origin');
		return JSON.parse(form.getAttribute('data-offer')).origin;
	}

	function setup(form) {
		var elsewhere = document.getElementById(form.id + '-elsewhere');

		if (!window.PublicKeyCredential ||
		    window.location.origin !== origin(form)) {
			if (elsewhere !== null)
				elsewhere.hidden = false;
			return;
		}
		form.hidden = false;
		form.addEventListener('submit', function (ev) {
			var run = form.getAttribute('data-passkey') === 'get' ?
			    get : create;

			ev.preventDefault();
			if (!form.reportValidity())
				return;
			run(form).catch(function (err) {
				failed(form, err);
			});
		});
	}

	document.addEventListener('DOMContentLoaded', function () {
		var forms = document.querySelectorAll('form[data-passkey]'), i;

		for (i = 0; i < forms.length; i++)
			setup(forms[i]);
	});
}());
