// The dependency wall of docs/architecture.md: src/ is the domain and imports no
// framework, driver or outer layer, http/ does not import the actor runtime, and
// neither http/ nor actors/ imports the other or the composition root
// (composition/), which builds the services both receive. Only the node start-up
// (src/server.ts, cli.ts) wires composition/, http/, persistence/ and actors/
// together. Every module a file names counts, however it is written: TypeScript's
// own scanner finds imports spread over several lines, re-exports, import() and
// require(), and skips comments and strings.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '../..');
const COMPOSITION_ROOTS = new Set(['src/server.ts', 'src/cli.ts']);

/** What the files of a layer must not import: packages (with their subpaths) and top-level folders of the repository. */
interface Wall {
  layer: 'src' | 'http' | 'actors';
  packages?: RegExp;
  folders: readonly string[];
}

// The domain: no framework or driver, no outer layer.
const SRC_WALL: Wall = { layer: 'src', packages: /^(koa|@koa\/router|typeorm|pg|nact|@nats-io\/[a-z-]+)(\/|$)/, folders: ['http', 'persistence', 'actors', 'composition'] };
// http/ may use src/ and persistence/ (docs/architecture.md), not the actor runtime nor its NATS client.
const HTTP_WALL: Wall = { layer: 'http', packages: /^(nact|@nats-io\/[a-z-]+)(\/|$)/, folders: ['actors'] };
// The layers that receive the services: not the root that builds them, nor each other.
const RECEIVER_WALLS: Wall[] = [{ layer: 'http', folders: ['composition', 'actors'] }, { layer: 'actors', folders: ['composition', 'http'] }];

function files(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const full = path.join(directory, name);
    return statSync(full).isDirectory() ? files(full) : full.endsWith('.ts') ? [full] : [];
  });
}

/** Every module specifier in `text`: `from '…'` (on any line of its statement), `import '…'`, `import('…')`, `require('…')`. */
function importedModules(text: string): string[] {
  return ts.preProcessFile(text, true, true).importedFiles.map((file) => file.fileName);
}

/** The imports of `file` (relative to ROOT, holding `text`) that cross `wall`, as `file: specifier`. */
function breaches(file: string, text: string, wall: Wall): string[] {
  return importedModules(text)
    .filter((specifier) => {
      if (!specifier.startsWith('.')) return wall.packages?.test(specifier) ?? false;
      const folder = path.relative(ROOT, path.resolve(ROOT, path.dirname(file), specifier)).split(path.sep)[0];
      return wall.folders.includes(folder);
    })
    .map((specifier) => `${file}: ${specifier}`);
}

/** Every breach of `wall` by the files of its layer (but the composition roots). */
function wallBreaches(wall: Wall): string[] {
  return files(path.join(ROOT, wall.layer))
    .map((file) => path.relative(ROOT, file))
    .filter((file) => !COMPOSITION_ROOTS.has(file))
    .flatMap((file) => breaches(file, readFileSync(path.join(ROOT, file), 'utf8'), wall));
}

describe('architecture', () => {
  it('finds every import of a file: across lines, re-exports, side effects, import() and require(), and none in comments or strings', () => {
    const text = [
      'import {',
      '  a,',
      "} from '../../http/routes/x';",
      "// import y from 'koa';",
      "export { b } from './b';",
      "import './side';",
      "const c = await import('../actors/z');",
      "const d = require('pg');",
      'const s = "from \'typeorm\'";',
      "import type { T } from 'nact';",
    ].join('\n');
    assert.deepEqual(importedModules(text), ['../../http/routes/x', './b', './side', '../actors/z', 'pg', 'nact']);
  });

  it('keeps src/ free of framework, driver and outer-layer imports', () => {
    assert.deepEqual(
      wallBreaches(SRC_WALL),
      [],
      'src/ is the domain: move framework or driver code to http/, persistence/ or actors/ and reach it through a port in src/ports/',
    );
  });

  it('keeps http/ off the actor runtime: it reaches it through ports in src/ports/', () => {
    assert.deepEqual(
      wallBreaches(HTTP_WALL),
      [],
      'http/ depends on src/ and persistence/ only (docs/architecture.md): add a port in src/ports/ and wire the actor runtime in src/server.ts',
    );
  });

  it('keeps http/ and actors/ off each other and off the composition root: both receive the services it builds', () => {
    assert.deepEqual(
      RECEIVER_WALLS.flatMap(wallBreaches),
      [],
      'composition/ builds the services and src/server.ts hands them to http/ and actors/: take the Services type from src/ports/services.ts, and reach the other layer through a port in src/ports/',
    );
  });

  it('counts an import whose `from` is on a later line, as a wall check reads it', () => {
    const text = "import type {\n  Services,\n} from '../../http/dependencies';\nconst store = require('typeorm');\n";
    assert.deepEqual(breaches('src/objectives/example.ts', text, SRC_WALL), ['src/objectives/example.ts: ../../http/dependencies', 'src/objectives/example.ts: typeorm']);
    assert.deepEqual(breaches('actors/kinds/example.ts', text, RECEIVER_WALLS[1]), ['actors/kinds/example.ts: ../../http/dependencies']);
  });
});
