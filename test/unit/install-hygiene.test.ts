// Install hygiene (issue 28 item 8): `npm ci` on the Node.js version the
// README names (any version package.json's engines accept) prints no EBADENGINE warning and installs no deprecated stub
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
  const declared = manifest.engines.node;
  /** The oldest version of each line the declared range accepts (`^20.19.0 || >=24.11.0` → 20.19.0, 24.11.0). */
  const lines = new semver.Range(declared).set.map((comparators) => semver.minVersion(comparators.map((comparator) => comparator.value).join(' ')));

  it('the README names the oldest version of every Node.js line package.json declares', () => {
    assert.ok(lines.length > 0 && lines.every(Boolean), `engines.node ${declared} has a minimum per line`);
    for (const oldest of lines) {
      assert.match(readme, new RegExp(`\\b${oldest!.major}\\.${oldest!.minor}\\b`), `the README names Node.js ${oldest!.major}.${oldest!.minor}`);
    }
  });

  it('every installed package supports every Node.js version package.json declares (no EBADENGINE from npm ci)', () => {
    const unsupported = Object.entries(lock.packages)
      .filter(([entryPath, entry]) => entryPath !== '' && !Array.isArray(entry.engines) && entry.engines?.node)
      .filter(([, entry]) => !semver.subset(declared, (entry.engines as { node: string }).node))
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
