// API key token verification is our own synchronous HS256 check (tokens.ts);
// jose still signs. These tests hold it to what jose's jwtVerify enforced for
// the pinned configuration: tokens jose issued pass, anything else fails.
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { SignJWT, type JWTHeaderParameters, type JWTPayload } from 'jose';
import { API_KEY_TOKEN_TYPE, ApiKeyTokens, isApiKeyToken } from '../../src/auth/tokens';
import type { ApiError } from '../../src/errors';

const KEY = new Uint8Array(randomBytes(32));
const VALID_CLAIMS = { ver: 3, iss: 'agentrt', aud: 'agentrt-api', sub: 'apikey_01ARZ3NDEKTSV4RRFFQ69G5FAV' };

/** A token with any header and claims, signed by jose with `key` (HS256 unless the header says otherwise). */
function signed(claims: JWTPayload, header: Partial<JWTHeaderParameters> = {}, key: Uint8Array = KEY): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: API_KEY_TOKEN_TYPE, ...header }).setIssuedAt().sign(key);
}

/** A token whose header and claims are written out and HMAC-signed by hand (for headers jose will not sign). */
function handSigned(header: Record<string, unknown>, claims: Record<string, unknown>): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const input = `${encode(header)}.${encode(claims)}`;
  return `${input}.${createHmac('sha256', KEY).update(input).digest('base64url')}`;
}

async function assertRefused(tokens: ApiKeyTokens, token: string): Promise<void> {
  await assert.rejects(tokens.verify(token), (error: ApiError) => {
    assert.equal(error.code, 'UNAUTHENTICATED');
    assert.equal(error.message, 'invalid API key token');
    return true;
  });
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

describe('API key tokens', () => {
  const tokens = new ApiKeyTokens(async () => KEY);

  it('verifies the tokens it issues and answers their claims', async () => {
    const token = await tokens.issue({ apiKeyId: VALID_CLAIMS.sub, tokenVersion: 7 });
    assert.ok(isApiKeyToken(token));
    assert.deepEqual(await tokens.verify(token), { apiKeyId: VALID_CLAIMS.sub, tokenVersion: 7 });
  });

  it('accepts any header encoding jose produces for the pinned algorithm and type, and an audience list', async () => {
    const token = await signed({ ...VALID_CLAIMS, aud: ['other', 'agentrt-api'] }, { kid: 'k1' });
    assert.ok(isApiKeyToken(token));
    assert.deepEqual(await tokens.verify(token), { apiKeyId: VALID_CLAIMS.sub, tokenVersion: 3 });
  });

  it('refuses a token signed with another key, or changed in any byte', async () => {
    await assertRefused(tokens, await signed(VALID_CLAIMS, {}, new Uint8Array(randomBytes(32))));
    const token = await tokens.issue({ apiKeyId: VALID_CLAIMS.sub, tokenVersion: 1 });
    const [header, payload, signature] = token.split('.');
    const otherPayload = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), ver: 2 })).toString('base64url');
    await assertRefused(tokens, `${header}.${otherPayload}.${signature}`);
    const otherFirst = (signature.startsWith('A') ? 'B' : 'A') + signature.slice(1);
    await assertRefused(tokens, `${header}.${payload}.${otherFirst}`);
    // The last character of a 32-byte signature carries 2 unused bits: 'A' and
    // 'B' there decode to the same bytes. jose accepted that spelling; the
    // signature is now compared as canonical text, so it is refused.
    const otherSpelling = signature.slice(0, -1) + String.fromCharCode(signature.charCodeAt(signature.length - 1) ^ 1);
    await assertRefused(tokens, `${header}.${payload}.${otherSpelling}`);
    await assertRefused(tokens, `${header}.${payload}.${signature}=`);
    await assertRefused(tokens, `${header}.${payload}.${signature}.extra`);
    await assertRefused(tokens, `${header}.${payload}`);
  });

  it('refuses an unsigned token and a token of another type or with critical extensions', async () => {
    const unsignedHeader = Buffer.from(JSON.stringify({ alg: 'none', typ: API_KEY_TOKEN_TYPE })).toString('base64url');
    const payload = Buffer.from(JSON.stringify(VALID_CLAIMS)).toString('base64url');
    await assertRefused(tokens, `${unsignedHeader}.${payload}.`);
    await assertRefused(tokens, await signed(VALID_CLAIMS, { typ: 'JWT' }));
    await assertRefused(tokens, handSigned({ alg: 'HS256', typ: API_KEY_TOKEN_TYPE, crit: ['exp'] }, VALID_CLAIMS));
    await assertRefused(tokens, handSigned({ alg: 'HS512', typ: API_KEY_TOKEN_TYPE }, VALID_CLAIMS));
    assert.deepEqual(await tokens.verify(handSigned({ alg: 'HS256', typ: API_KEY_TOKEN_TYPE }, VALID_CLAIMS)), { apiKeyId: VALID_CLAIMS.sub, tokenVersion: 3 });
  });

  it('refuses another issuer or audience, and missing or mistyped claims', async () => {
    await assertRefused(tokens, await signed({ ...VALID_CLAIMS, iss: 'someone-else' }));
    await assertRefused(tokens, await signed({ ...VALID_CLAIMS, aud: 'another-api' }));
    await assertRefused(tokens, await signed({ ...VALID_CLAIMS, sub: undefined }));
    await assertRefused(tokens, await signed({ ...VALID_CLAIMS, ver: '3' }));
    await assertRefused(tokens, await signed({ ...VALID_CLAIMS, exp: 'tomorrow' as unknown as number }));
  });

  it('honours exp and nbf when present', async () => {
    await assertRefused(tokens, await signed({ ...VALID_CLAIMS, exp: nowSeconds() - 1 }));
    await assertRefused(tokens, await signed({ ...VALID_CLAIMS, nbf: nowSeconds() + 3600 }));
    const current = await signed({ ...VALID_CLAIMS, exp: nowSeconds() + 3600, nbf: nowSeconds() - 1 });
    assert.deepEqual(await tokens.verify(current), { apiKeyId: VALID_CLAIMS.sub, tokenVersion: 3 });
  });

  it('tells our tokens from others by the header type', async () => {
    assert.ok(isApiKeyToken(await signed(VALID_CLAIMS, { kid: 'any' })));
    assert.ok(!isApiKeyToken(await signed(VALID_CLAIMS, { typ: 'JWT' })));
    assert.ok(!isApiKeyToken('garbage'));
    assert.ok(!isApiKeyToken('.x.y'));
    assert.ok(!isApiKeyToken(`${Buffer.from('[1]').toString('base64url')}.x.y`));
  });
});
