// The bench's reference (tests/bench/README.md): node oidc-provider with
// its default in-memory adapter, one confidential client, refresh tokens
// not rotated, no ID token on refresh. Seeds, through the provider's own
// models, ACCOUNTS accounts, each with a grant, a refresh token and an
// access token, writes them to OUTDIR (oidc-refresh-tokens,
// oidc-access-tokens: one token a line), then listens on 127.0.0.1:PORT
// and prints "ready". No per-request logging, no dev interactions.
//
//   node server.mjs PORT OUTDIR ACCOUNTS
//
// The refresh tokens carry offline_access only: oidc-provider issues an ID
// token on a refresh grant whenever the refresh token's scope has openid
// (lib/helpers/grant_common.js issueIdToken). The userinfo endpoint needs
// openid on the access token (lib/actions/userinfo.js), so the access
// tokens are seeded apart, with "openid profile", in the same grant.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';

import Provider from 'oidc-provider';

const [port, outdir, accountsArg] = process.argv.slice(2);
const accounts = Number.parseInt(accountsArg, 10);
if (!port || !outdir || !(accounts > 0)) {
	console.error('usage: node server.mjs PORT OUTDIR ACCOUNTS');
	process.exit(2);
}

const CLIENT_ID = 'bench-tpp';
const CLIENT_SECRET = 'bench-secret';

// A signing key of its own (no development keys); ID tokens are never
// issued in the bench, but the provider needs one.
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'bench', use: 'sig', alg: 'RS256' };

const provider = new Provider(`http://127.0.0.1:${port}`, {
	clients: [{
		client_id: CLIENT_ID,
		client_secret: CLIENT_SECRET,
		token_endpoint_auth_method: 'client_secret_basic',
		grant_types: ['authorization_code', 'refresh_token'],
		response_types: ['code'],
		redirect_uris: ['http://127.0.0.1:8000/callback'],
	}],
	jwks: { keys: [jwk] },
	cookies: { keys: [randomBytes(32).toString('base64url')] },
	scopes: ['openid', 'offline_access', 'profile'],
	claims: { openid: ['sub'], profile: ['name'] },
	features: {
		devInteractions: { enabled: false },
		userinfo: { enabled: true },
		// Tokens for the provider's own userinfo: no resource server.
		resourceIndicators: { enabled: false },
	},
	rotateRefreshToken: false,
	// A refresh token for every code of a client allowed the grant.
	issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
	async findAccount(_ctx, sub) {
		return {
			accountId: sub,
			async claims() {
				return { sub, name: `Bench PSU ${sub}` };
			},
		};
	},
	// psd2gate's lifetimes: access tokens 15 minutes.
	ttl: {
		AccessToken: 900,
		AuthorizationCode: 60,
		Grant: 86400,
		IdToken: 3600,
		Interaction: 600,
		RefreshToken: 86400,
		Session: 86400,
	},
});

const client = await provider.Client.find(CLIENT_ID);
const refresh = [];
const access = [];
for (let i = 1; i <= accounts; i += 1) {
	const accountId = `bench-psu-${String(i).padStart(5, '0')}`;
	const grant = new provider.Grant({ accountId, clientId: CLIENT_ID });
	grant.addOIDCScope('openid profile offline_access');
	const grantId = await grant.save();
	const rt = new provider.RefreshToken({
		accountId, client, grantId, gty: 'authorization_code',
		scope: 'offline_access', expiresWithSession: false,
	});
	refresh.push(await rt.save());
	const at = new provider.AccessToken({
		accountId, client, grantId, gty: 'authorization_code',
		scope: 'openid profile', expiresWithSession: false,
	});
	access.push(await at.save());
}
writeFileSync(join(outdir, 'oidc-refresh-tokens'), `${refresh.join('\n')}\n`);
writeFileSync(join(outdir, 'oidc-access-tokens'), `${access.join('\n')}\n`);

createServer(provider.callback()).listen(Number(port), '127.0.0.1', () => {
	console.log('ready');
});
