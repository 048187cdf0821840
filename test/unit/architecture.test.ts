// The dependency wall of docs/architecture.md: src/ is the domain and imports no
// framework or driver, http/ does not import the actor runtime, and neither http/
// nor actors/ imports the other or the composition root (composition/), which
// builds the services both receive. Only the node start-up (src/server.ts, cli.ts)
// wires composition/, http/, persistence/ and actors/ together.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const FORBIDDEN = /from '(koa|@koa\/router|typeorm|pg|nact|@nats-io\/[a-z-]+)'|from '\.\.\/+(\.\.\/)*(http|persistence|actors)\//;
// http/ may use src/ and persistence/ (docs/architecture.md), not the actor runtime nor its NATS client.
const HTTP_FORBIDDEN = /from '(nact|@nats-io\/[a-z-]+)'|from '\.\.\/+(\.\.\/)*actors\//;
const COMPOSITION_ROOTS = new Set(['src/server.ts', 'src/cli.ts']);
// What each layer that receives the services must not import: the root that builds them, and the other layer.
const RECEIVER_FORBIDDEN: Record<string, RegExp> = {
  http: /from '\.\.\/+(\.\.\/)*(composition|actors)(\/|')/,
  actors: /from '\.\.\/+(\.\.\/)*(composition|http)(\/|')/,
};

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

  it('keeps http/ and actors/ off each other and off the composition root: both receive the services it builds', () => {
    const offenders = Object.entries(RECEIVER_FORBIDDEN).flatMap(([layer, forbidden]) =>
      files(path.join(ROOT, layer))
        .map((file) => path.relative(ROOT, file))
        .flatMap((file) =>
          readFileSync(path.join(ROOT, file), 'utf8')
            .split('\n')
            .filter((line) => /^import /.test(line) && forbidden.test(line))
            .map((line) => `${file}: ${line}`),
        ),
    );
    assert.deepEqual(
      offenders,
      [],
      'composition/ builds the services and src/server.ts hands them to http/ and actors/: take the Services type from src/ports/services.ts, and reach the other layer through a port in src/ports/',
    );
  });
});
