// The dependency wall of docs/architecture.md: src/ is the domain and imports no
// framework or driver, and http/ does not import the actor runtime. Only the
// composition roots (server.ts, cli.ts) wire http/, persistence/ and actors/ together.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const FORBIDDEN = /from '(koa|@koa\/router|typeorm|pg|nact|@nats-io\/[a-z-]+)'|from '\.\.\/+(\.\.\/)*(http|persistence|actors)\//;
// http/ may use src/ and persistence/ (docs/architecture.md), not the actor runtime nor its NATS client.
const HTTP_FORBIDDEN = /from '(nact|@nats-io\/[a-z-]+)'|from '\.\.\/+(\.\.\/)*actors\//;
const COMPOSITION_ROOTS = new Set(['src/server.ts', 'src/cli.ts']);

function files(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const full = path.join(directory, name);
    return statSync(full).isDirectory() ? files(full) : full.endsWith('.ts') ? [full] : [];
  });
}

describe('architecture', () => {
  it('keeps src/ free of framework, driver and outer-layer imports', () => {
    const offenders = files(path.join(ROOT, 'src'))
      .map((file) => path.relative(ROOT, file))
      .filter((file) => !COMPOSITION_ROOTS.has(file))
      .flatMap((file) =>
        readFileSync(path.join(ROOT, file), 'utf8')
          .split('\n')
          .filter((line) => /^import /.test(line) && FORBIDDEN.test(line))
          .map((line) => `${file}: ${line}`),
      );
    assert.deepEqual(
      offenders,
      [],
      'src/ is the domain: move framework or driver code to http/, persistence/ or actors/ and reach it through a port in src/ports/',
    );
  });

  it('keeps http/ off the actor runtime: it reaches it through ports in src/ports/', () => {
    const offenders = files(path.join(ROOT, 'http'))
      .map((file) => path.relative(ROOT, file))
      .flatMap((file) =>
        readFileSync(path.join(ROOT, file), 'utf8')
          .split('\n')
          .filter((line) => /^import /.test(line) && HTTP_FORBIDDEN.test(line))
          .map((line) => `${file}: ${line}`),
      );
    assert.deepEqual(offenders, [], 'http/ depends on src/ and persistence/ only (docs/architecture.md): add a port in src/ports/ and wire the actor runtime in src/server.ts');
  });
});
