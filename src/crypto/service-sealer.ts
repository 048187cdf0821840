// Seals account-level secrets (the webhook signing secret) under a service key
// that is stored wrapped by the master key, so a database dump alone cannot
// forge webhooks. The key loads on first use.
import { open, seal } from './envelope';

export type ServiceKeySource = () => Promise<Buffer>;

export class ServiceSealer {
  private key?: Promise<Buffer>;

  constructor(private readonly keySource: ServiceKeySource) {}

  /** Seals `plaintext`, bound to `aad` (say, the account and the field kind). */
  async seal(aad: string, plaintext: string): Promise<string> {
    return seal(await this.serviceKey(), Buffer.from(plaintext, 'utf8'), aad);
  }

  /**
   * Opens a value sealed for `aad`.
   * @throws DecryptionError when it was sealed for another aad, altered, or under another key
   */
  async open(aad: string, sealed: string): Promise<string> {
    return open(await this.serviceKey(), sealed, aad).toString('utf8');
  }

  private serviceKey(): Promise<Buffer> {
    this.key ??= this.keySource().catch((error: unknown) => {
      this.key = undefined; // a failed load (database down) is retried on the next call
      throw error;
    });
    return this.key;
  }
}
