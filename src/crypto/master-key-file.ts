// Replaces the data folder's master key file after a master-key rotation:
// written to a temporary file (mode 0600) and renamed over the old one, so a
// crash leaves either the old or the new key, never a truncated file.
import { promises as fs } from 'node:fs';

/** Atomically replaces `file` with the base64 of `key` (mode 0600). */
export async function replaceMasterKeyFile(file: string, key: Buffer): Promise<void> {
  const temporary = `${file}.${process.pid}.tmp`;
  await fs.writeFile(temporary, `${key.toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
  try {
    await fs.rename(temporary, file);
  } catch (error) {
    await fs.rm(temporary, { force: true });
    throw error;
  }
}
