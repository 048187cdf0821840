// Install hygiene (issue 28 item 8): `npm ci` on the Node.js version the
// README names prints no EBADENGINE warning and installs no deprecated stub
// type package. Read from package-lock.json (what `npm ci` installs) and the
// installed packages' manifests, so a dependency bump that breaks either
// fails here rather than in a user's terminal.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import semver from 'semver';

const root = path.resolve(__dirname, '../..');
const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { engines?: { node?: string } | string[]; optional?: boolean; dev?: boolean }>;
};
const readme = readFileSync(path.join(root, 'README.md'), 'utf8');

/** The package name of a lock entry's path (`node_modules/a/node_modules/@b/c` → `@b/c`). */
const nameOf = (entryPath: string) => entryPath.slice(entryPath.lastIndexOf('node_modules/') + 'node_modules/'.length);

describe('install hygiene', () => {
  const oldest = semver.minVersion(manifest.engines.node);

  it('the README names the oldest Node.js version package.json declares', () => {
    assert.ok(oldest, `engines.node ${manifest.engines.node} has a minimum`);
    const named = /Node\.js (\d+\.\d+)(?:\.\d+)? or later/.exec(readme);
    assert.ok(named, 'the README says which Node.js version to install');
    assert.equal(semver.coerce(named[1])?.version, oldest.version);
  });

  it('every installed package supports that Node.js version (no EBADENGINE from npm ci)', () => {
    const unsupported = Object.entries(lock.packages)
      .filter(([entryPath, entry]) => entryPath !== '' && !Array.isArray(entry.engines) && entry.engines?.node)
      .filter(([, entry]) => !semver.satisfies(oldest!, (entry.engines as { node: string }).node))
      .map(([entryPath, entry]) => `${nameOf(entryPath)} needs node ${(entry.engines as { node: string }).node}`);
    assert.deepEqual(unsupported, []);
  });

  it('no @types package stands in for a package that ships its own types (a deprecated stub)', () => {
    const stubs = Object.keys(lock.packages)
      .map(nameOf)
      .filter((name) => name.startsWith('@types/'))
      .filter((name) => {
        const typed = name.slice('@types/'.length);
        const packageName = typed.includes('__') ? `@${typed.replace('__', '/')}` : typed;
        try {
          const own = JSON.parse(readFileSync(path.join(root, 'node_modules', packageName, 'package.json'), 'utf8')) as Record<string, unknown>;
          return Boolean(own.types ?? own.typings);
        } catch {
          return false; // not installed: the @types package is the only typing
        }
      });
    assert.deepEqual(stubs, []);
  });
});
