// `agentrt rotate-master-key` (rotateMasterKey): every workspace data key is
// rewrapped in one transaction; secrets and provider keys stay decryptable
// under the new master key and no longer under the old one. Runs on its own
// database, since a rotation touches every workspace it can see.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { DataSource } from 'typeorm';
import { createServices } from '../../composition';
import type { Services } from '../../src/ports/services';
import { createDataSource } from '../../persistence/data-source';
import { rotateMasterKey } from '../../persistence/repositories/data-key.store';
import type { Principal } from '../../src/auth/principal';
import type { WorkspaceRef } from '../../src/auth/workspace-access';
import { ExitCode, main } from '../../src/cli';
import { ConfigError, loadConfig } from '../../src/config';
import { DecryptionError } from '../../src/crypto/envelope';
import { createTestDatabase, type TestDatabase } from '../support/database';

describe('rotateMasterKey()', () => {
  const oldKey = randomBytes(32);
  const newKey = randomBytes(32);
  let database: TestDatabase;
  let dataSource: DataSource;
  const servicesWith = (masterKey: Buffer): Services => createServices({ dataSource, masterKey, config: loadConfig({ DATABASE_URL: database.url }) });
  const workspaces: WorkspaceRef[] = [];
  const tokens: string[] = [];
  const accountIds: string[] = [];
  const wrappedKeys = async (): Promise<Array<{ workspace_id: string; wrapped_key: string }>> =>
    dataSource.query('SELECT workspace_id, wrapped_key FROM workspace_data_keys ORDER BY workspace_id');
  const sealedValues = async (): Promise<string[]> =>
    (await dataSource.query('SELECT value_ciphertext FROM workspace_secrets ORDER BY id')).map((row: { value_ciphertext: string }) => row.value_ciphertext);

  before(async () => {
    database = await createTestDatabase();
    dataSource = createDataSource({ url: database.url, poolSize: 2 });
    await dataSource.initialize();
    const services = servicesWith(oldKey);
    for (const name of ['first', 'second']) {
      const account = await services.accounts.bootstrap({ accountName: name, email: `${name}@example.com` });
      const workspace = (await services.store.workspaces.findById(account.workspaceId))!;
      const principal: Principal = { kind: 'API_KEY', accountId: account.accountId, profileId: account.profileId, scopes: ['*'], admin: true, global: true };
      await services.secrets.create(principal, workspace, { metadata: { name: 'TOKEN' }, spec: { value: `token-of-${name}` } });
      await services.secrets.create(principal, workspace, { metadata: { name: 'PASSWORD' }, spec: { value: `password-of-${name}` } });
      await services.providerKeys.create(principal, workspace, { metadata: { name: 'openrouter' }, spec: { apiKey: `sk-or-${name}` } });
      workspaces.push(workspace);
      tokens.push(account.globalApiKey.token);
      accountIds.push(account.accountId);
    }
  });
  after(async () => {
    await dataSource.destroy();
    await database.drop();
  });

  it('refuses a wrong current key and changes nothing', async () => {
    const before = await wrappedKeys();
    await assert.rejects(rotateMasterKey(dataSource, randomBytes(32), newKey), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.equal(error.message, `the data key of workspace ${before[0].workspace_id} opens with neither the current nor the new master key; nothing was changed`);
      return true;
    });
    assert.deepEqual(await wrappedKeys(), before);
  });

  it('refuses a new key equal to the current one', async () => {
    await assert.rejects(rotateMasterKey(dataSource, oldKey, Buffer.from(oldKey)), { name: 'ConfigError', message: 'the new master key is the same as the current one' });
  });

  it('rewraps every data key without re-encrypting values; everything decrypts under the new key, nothing under the old', async () => {
    const values = await sealedValues();
    const before = await wrappedKeys();
    assert.deepEqual(await rotateMasterKey(dataSource, oldKey, newKey), { rewrapped: 2, alreadyCurrent: 0, serviceKeysRewrapped: 2 });
    assert.deepEqual(await sealedValues(), values);
    const after = await wrappedKeys();
    assert.equal(after.length, 2);
    after.forEach((row, index) => assert.notEqual(row.wrapped_key, before[index].wrapped_key));

    const rotated = servicesWith(newKey);
    for (const [index, name] of ['first', 'second'].entries()) {
      const workspaceId = workspaces[index].id;
      assert.equal(await rotated.secrets.resolveSecretTemplates(workspaceId, '{{secrets.TOKEN}}/{{secrets.PASSWORD}}'), `token-of-${name}/password-of-${name}`);
      assert.equal((await rotated.providerKeys.resolveProviderCredentials(workspaceId)).apiKey, `sk-or-${name}`);
    }
    // API key tokens survive: their signing key is a service key, rewrapped too.
    for (const token of tokens) assert.match((await rotated.tokens.verify(token)).apiKeyId, /^apikey_/);
    // So do the sealed webhook signing secrets.
    for (const accountId of accountIds) assert.match((await rotated.accounts.webhookSigningSecrets(accountId)).current, /^wh_/);
    const stale = servicesWith(oldKey);
    await assert.rejects(stale.tokens.verify(tokens[0]), (error: unknown) => error instanceof DecryptionError);
    await assert.rejects(stale.secrets.resolveSecretTemplates(workspaces[0].id, '{{secrets.TOKEN}}'), (error: unknown) => error instanceof DecryptionError);
    await assert.rejects(stale.providerKeys.resolveProviderCredentials(workspaces[1].id), (error: unknown) => error instanceof DecryptionError);
  });

  it('is safe to repeat: keys already under the new master key are left alone', async () => {
    const before = await wrappedKeys();
    assert.deepEqual(await rotateMasterKey(dataSource, oldKey, newKey), { rewrapped: 0, alreadyCurrent: 2, serviceKeysRewrapped: 0 });
    assert.deepEqual(await wrappedKeys(), before);
  });
});

describe('agentrt rotate-master-key', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let dataDir: string;
  let workspaceId: string;
  const oldKey = randomBytes(32);
  const newKey = randomBytes(32);

  /** Runs the command in process, capturing what it prints. */
  async function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
    const output = { stdout: '', stderr: '' };
    const originals = { stdout: process.stdout.write, stderr: process.stderr.write };
    process.stdout.write = ((chunk: string) => ((output.stdout += chunk), true)) as typeof process.stdout.write;
    process.stderr.write = ((chunk: string) => ((output.stderr += chunk), true)) as typeof process.stderr.write;
    try {
      const code = await main(['rotate-master-key', ...args], { DATABASE_URL: database.url, AGENTRT_DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...env });
      return { code, ...output };
    } finally {
      process.stdout.write = originals.stdout;
      process.stderr.write = originals.stderr;
    }
  }

  before(async () => {
    database = await createTestDatabase();
    dataSource = createDataSource({ url: database.url, poolSize: 2 });
    await dataSource.initialize();
    dataDir = mkdtempSync(path.join(tmpdir(), 'agentrt-rotate-'));
    writeFileSync(path.join(dataDir, 'master.key'), `${oldKey.toString('base64')}\n`, { mode: 0o600 });
    const services = createServices({ dataSource, masterKey: oldKey, config: loadConfig({ DATABASE_URL: database.url }) });
    const account = await services.accounts.bootstrap({ accountName: 'cli', email: 'cli@example.com' });
    const workspace = (await services.store.workspaces.findById(account.workspaceId))!;
    const principal: Principal = { kind: 'API_KEY', accountId: account.accountId, profileId: account.profileId, scopes: ['*'], admin: true, global: true };
    await services.secrets.create(principal, workspace, { metadata: { name: 'TOKEN' }, spec: { value: 'cli-token' } });
    workspaceId = workspace.id;
  });
  after(async () => {
    await dataSource.destroy();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('needs a new key of 32 bytes (usage errors, exit code 2)', async () => {
    const missing = await run([], {});
    assert.equal(missing.code, ExitCode.USAGE);
    assert.match(missing.stderr, /^agentrt: rotate-master-key needs --new-key BASE64 or AGENTRT_NEW_MASTER_KEY\n/);
    const short = await run(['--new-key', randomBytes(16).toString('base64')], {});
    assert.equal(short.code, ExitCode.USAGE);
    assert.match(short.stderr, /^agentrt: the new master key must be the base64 of exactly 32 bytes\n/);
  });

  it('fails with exit code 1 and changes nothing when the current key is wrong', async () => {
    const result = await run([], { AGENTRT_MASTER_KEY: randomBytes(32).toString('base64'), AGENTRT_NEW_MASTER_KEY: newKey.toString('base64') });
    assert.equal(result.code, ExitCode.FAILED);
    assert.equal(result.stderr, `agentrt: the data key of workspace ${workspaceId} opens with neither the current nor the new master key; nothing was changed\n`);
    assert.equal(readFileSync(path.join(dataDir, 'master.key'), 'utf8').trim(), oldKey.toString('base64'));
  });

  it('rewraps the data keys under the new key and replaces master.key', async () => {
    const result = await run(['--new-key', newKey.toString('base64')], {});
    assert.equal(result.code, ExitCode.OK, result.stderr);
    const file = path.join(dataDir, 'master.key');
    assert.equal(result.stdout, `rewrapped 1 workspace data keys (0 already under the new key); replaced ${file} with the new key\n`);
    assert.equal(readFileSync(file, 'utf8').trim(), newKey.toString('base64'));
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const rotated = createServices({ dataSource, masterKey: newKey, config: loadConfig({ DATABASE_URL: database.url }) });
    assert.equal(await rotated.secrets.resolveSecretTemplates(workspaceId, '{{secrets.TOKEN}}'), 'cli-token');
  });

  it('with the current key in AGENTRT_MASTER_KEY, says to set the new one on every node', async () => {
    const third = randomBytes(32);
    const result = await run([], { AGENTRT_MASTER_KEY: newKey.toString('base64'), AGENTRT_NEW_MASTER_KEY: third.toString('base64') });
    assert.equal(result.code, ExitCode.OK, result.stderr);
    assert.equal(result.stdout, 'rewrapped 1 workspace data keys (0 already under the new key); now set AGENTRT_MASTER_KEY to the new key on every node\n');
  });
});
