// A test OpenID Connect issuer: an RSA key, its JWKS served over real HTTP, and
// a signer for ID tokens with a chosen email.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';

export interface TestIssuer {
  issuer: string;
  jwksUrl: string;
  /** An ID token for `email`, signed by the issuer (or by `foreignKey` to fake one). */
  token(email: string, options?: { foreignKey?: CryptoKey; issuer?: string; emailVerified?: boolean | null; subject?: string; expiresIn?: string | null }): Promise<string>;
  close(): Promise<void>;
}

export async function startTestIssuer(): Promise<TestIssuer> {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };
  const server = http.createServer((request, response) => {
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const issuer = `${base}/issuer`;
  return {
    issuer,
    jwksUrl: `${base}/jwks.json`,
    token: (email, options = {}) => {
      // `emailVerified: null` leaves the claim out.
      const jwt = new SignJWT(options.emailVerified === null ? { email } : { email, email_verified: options.emailVerified ?? true })
        .setProtectedHeader({ alg: 'RS256', kid: 'test-key' })
        .setIssuer(options.issuer ?? issuer)
        .setSubject(options.subject ?? `user-${email}`)
        .setIssuedAt();
      // `expiresIn: null` leaves out `exp`, which a token must never be accepted without.
      if (options.expiresIn !== null) jwt.setExpirationTime(options.expiresIn ?? '5m');
      return jwt.sign(options.foreignKey ?? privateKey);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
