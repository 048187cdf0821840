// The node's 32-byte master key: from AGENTRT_MASTER_KEY when set, otherwise
// generated once into `<dataDir>/master.key` (mode 0600) and read back on every
// later start. A malformed key fails start-up; it is never silently replaced.
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { ConfigError, parseMasterKey } from './config';

/** Name of the generated key file inside the data folder. */
export const MASTER_KEY_FILE = 'master.key';

/** Where the master key came from (for the start-up log line, never the key). */
export type MasterKeySource = 'environment' | 'file' | 'generated';

export interface LoadedMasterKey {
  key: Buffer;
  source: MasterKeySource;
  /** The key file, when the key is kept in the data folder. */
  file?: string;
}

export interface MasterKeyOptions {
  /** The key from configuration (AGENTRT_MASTER_KEY, already decoded). */
  configured?: Buffer;
  /** The data folder holding `master.key` when no key is configured. */
  dataDir: string;
}

/**
 * Returns the configured key, or the key in `<dataDir>/master.key`, creating
 * that file (base64 of 32 random bytes, mode 0600) when it does not exist.
 * Safe against two processes starting at once: the file is created
 * exclusively, and the loser reads the winner's key.
 * @throws ConfigError when the key file exists but does not hold a valid key
 */
export async function loadMasterKey(options: MasterKeyOptions): Promise<LoadedMasterKey> {
  if (options.configured) return { key: options.configured, source: 'environment' };
  const file = path.join(options.dataDir, MASTER_KEY_FILE);
  const existing = await readKeyFile(file);
  if (existing) return { key: existing, source: 'file', file };
  const generated = await createKeyFile(file);
  if (generated) return { key: generated, source: 'generated', file };
  const raced = await readKeyFile(file);
  if (!raced) throw new ConfigError(`${file} vanished while it was being created`);
  return { key: raced, source: 'file', file };
}

/** Reads and decodes a key file; null when the file does not exist. */
async function readKeyFile(file: string): Promise<Buffer | null> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return null;
    throw error;
  }
  try {
    return parseMasterKey(text.trim());
  } catch {
    throw new ConfigError(
      `${file} does not hold a valid master key (base64 of exactly 32 bytes); ` +
        'restore it from a backup or set AGENTRT_MASTER_KEY. Refusing to start: data encrypted under the old key would be unreadable',
    );
  }
}

/** Creates the key file exclusively; null when another process created it first. */
async function createKeyFile(file: string): Promise<Buffer | null> {
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  try {
    await fs.writeFile(file, `${key.toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if (isErrno(error, 'EEXIST')) return null;
    throw error;
  }
  return key;
}

function isErrno(error: unknown, code: string): boolean {
  return error instanceof Error && (error as NodeJS.ErrnoException).code === code;
}
