// A TPP's FAPI 2.0 client, built on panva's openid-client (a certified
// FAPI 2.0 relying party; nothing here reimplements OAuth): metadata by
// RFC 8414 discovery, a pushed authorisation request (RFC 9126) with
// PKCE S256, client authentication by private_key_jwt (RFC 7523) and
// DPoP (RFC 9449) at PAR, at the token endpoint and at the resource.
// tests/browser/test_fapi2_client.py runs it in two steps around the
// PSU's login in Chromium:
//
//   node client.mjs begin STATE      the PAR; STATE gains url, the PKCE
//                                    verifier, the state and the DPoP key
//   node client.mjs finish STATE CALLBACK_URL
//                                    the code grant, then each call in
//                                    STATE.calls; prints a JSON result
//
// STATE (JSON) holds issuer, client_id, redirect_uri, scope, calls
// ([{method, url, body, headers}]), signing_proxy and the variant:
//
//   client_key (PKCS#8 PEM, ES256)   private_key_jwt and DPoP-bound
//                                    tokens
//   mtls: {cert, key, ca, hosts}     tls_client_auth and mTLS-bound
//                                    tokens (RFC 8705): every request
//                                    over TLS with the client certificate
//                                    (files), trusting ca; hosts maps the
//                                    bank's names to addresses
//
// The bank requires every API call to carry the TPP's HTTP signature
// over its headers (DPoP among them), which the test's signing gateway
// adds; calls go there with the target in X-Psd2-Target.
import { readFileSync, writeFileSync } from 'node:fs';
import { createPrivateKey, webcrypto } from 'node:crypto';
import * as client from 'openid-client';
import { Agent, fetch as tlsFetch } from 'undici';

const ES256 = { name: 'ECDSA', namedCurve: 'P-256' };

function load(file) {
	return JSON.parse(readFileSync(file, 'utf8'));
}

async function clientKey(pem) {
	const der = createPrivateKey(pem).export({ type: 'pkcs8',
	    format: 'der' });
	return webcrypto.subtle.importKey('pkcs8', der, ES256, false,
	    ['sign']);
}

// The bank's names resolved as the test says (dns.lookup's signature).
function lookup(hosts) {
	return (name, options, cb) => {
		const address = hosts[name] || name;
		if (options && options.all)
			cb(null, [{ address, family: 4 }]);
		else
			cb(null, address, 4);
	};
}

// The OAuth endpoints: plain fetch, or TLS with the client certificate.
function direct(mtls) {
	if (mtls === undefined)
		return fetch;
	const dispatcher = new Agent({ connect: {
		cert: readFileSync(mtls.cert), key: readFileSync(mtls.key),
		ca: readFileSync(mtls.ca), lookup: lookup(mtls.hosts) } });
	return (url, options) => tlsFetch(url, { ...options, dispatcher });
}

// API calls through the signing gateway; OAuth endpoints directly.
function gateway(proxy, send) {
	return (url, options) => {
		if (!new URL(url).pathname.startsWith('/auth/v1/'))
			return send(url, options);
		const headers = new Headers(options.headers);
		headers.set('X-Psd2-Target', url);
		return fetch(proxy, { ...options, headers });
	};
}

async function configure(st) {
	const send = direct(st.mtls);
	const auth = st.mtls === undefined ?
	    client.PrivateKeyJwt(await clientKey(st.client_key)) :
	    client.TlsClientAuth();
	const config = await client.discovery(new URL(st.issuer),
	    st.client_id, st.mtls === undefined ? undefined :
	    { use_mtls_endpoint_aliases: true }, auth,
	    { algorithm: 'oauth2', execute: [client.allowInsecureRequests],
	    [client.customFetch]: send });
	config[client.customFetch] = gateway(st.signing_proxy, send);
	return config;
}

// DPoP with private_key_jwt; mTLS-bound tokens need none.
async function dpopOptions(config, st) {
	if (st.mtls !== undefined)
		return {};
	return { DPoP: client.getDPoPHandle(config, await dpopKeys(st)) };
}

async function dpopKeys(st) {
	if (st.dpop_private === undefined) {
		const pair = await client.randomDPoPKeyPair('ES256',
		    { extractable: true });
		st.dpop_private = await webcrypto.subtle.exportKey('jwk',
		    pair.privateKey);
		st.dpop_public = await webcrypto.subtle.exportKey('jwk',
		    pair.publicKey);
		return pair;
	}
	return {
		privateKey: await webcrypto.subtle.importKey('jwk',
		    st.dpop_private, ES256, true, ['sign']),
		publicKey: await webcrypto.subtle.importKey('jwk',
		    st.dpop_public, ES256, true, ['verify']),
	};
}

async function begin(file) {
	const st = load(file);
	const config = await configure(st);
	const dpop = await dpopOptions(config, st);
	st.verifier = client.randomPKCECodeVerifier();
	st.state = client.randomState();
	const url = await client.buildAuthorizationUrlWithPAR(config, {
		redirect_uri: st.redirect_uri,
		scope: st.scope,
		state: st.state,
		code_challenge: await client.calculatePKCECodeChallenge(
		    st.verifier),
		code_challenge_method: 'S256',
	}, dpop);
	st.url = url.href;
	writeFileSync(file, JSON.stringify(st));
	return { url: st.url };
}

async function finish(file, callback) {
	const st = load(file);
	const config = await configure(st);
	const dpop = await dpopOptions(config, st);
	const tokens = await client.authorizationCodeGrant(config,
	    new URL(callback), { pkceCodeVerifier: st.verifier,
	    expectedState: st.state }, undefined, dpop);
	const out = { token_type: tokens.token_type,
	    scope: tokens.scope, expires_in: tokens.expires_in,
	    has_refresh_token: tokens.refresh_token !== undefined,
	    calls: [] };
	for (const c of st.calls) {
		const headers = new Headers(c.headers || {});
		if (c.body !== undefined)
			headers.set('Content-Type', 'application/json');
		const r = await client.fetchProtectedResource(config,
		    tokens.access_token, new URL(c.url), c.method,
		    c.body === undefined ? undefined : JSON.stringify(c.body),
		    headers, dpop);
		out.calls.push({ status: r.status, body: await r.text() });
	}
	return out;
}

const [cmd, file, arg] = process.argv.slice(2);
const run = { begin: () => begin(file), finish: () => finish(file, arg) };
if (run[cmd] === undefined) {
	console.error('usage: node client.mjs begin|finish STATE [CALLBACK]');
	process.exit(2);
}
try {
	console.log(JSON.stringify(await run[cmd]()));
} catch (e) {
	console.error(e.stack || String(e));
	if (e.cause !== undefined)
		console.error('cause:', JSON.stringify(e.cause));
	process.exit(1);
}
