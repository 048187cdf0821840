// The build behind `npm start`, `npm run build` and `npm test` (scripts/build.mjs),
// run on a small project with agentrt's own tsconfig files: the first build says
// what it does, a build with no change writes nothing (so a second start is
// quick), and a changed, added back or deleted-from-dist file is built again.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { promises as fs, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const BUILD_SCRIPT = path.join(ROOT, 'scripts/build.mjs');
/** A date long past: a file written by a build gets a later one. */
const LONG_AGO = new Date('2001-01-01T00:00:00Z');

interface Build {
  status: number | null;
  stderr: string;
}

describe('scripts/build.mjs (the incremental build)', function () {
  this.timeout(120_000);
  let project: string;

  const build = (): Build => {
    const result = spawnSync(process.execPath, [BUILD_SCRIPT], { cwd: project, encoding: 'utf8' });
    return { status: result.status, stderr: `${result.stdout}${result.stderr}` };
  };
  const write = async (file: string, text: string) => {
    await fs.mkdir(path.dirname(path.join(project, file)), { recursive: true });
    await fs.writeFile(path.join(project, file), text);
  };
  const read = (file: string) => fs.readFile(path.join(project, file), 'utf8');

  /** Dates every file under dist/ long ago, then returns what a build rewrote since. */
  async function backdateDist(): Promise<() => Promise<string[]>> {
    const files = await listFiles(path.join(project, 'dist'));
    await Promise.all(files.map((file) => fs.utimes(file, LONG_AGO, LONG_AGO)));
    return async () => {
      const stats = await Promise.all(files.map(async (file) => ({ file, mtime: (await fs.stat(file)).mtime })));
      return stats.filter(({ mtime }) => mtime.getTime() !== LONG_AGO.getTime()).map(({ file }) => path.relative(project, file)).sort();
    };
  }

  before(async () => {
    project = await fs.mkdtemp(path.join(os.tmpdir(), 'agentrt-build-'));
    for (const config of ['tsconfig.json', 'tsconfig.build.json', 'package.json']) await fs.copyFile(path.join(ROOT, config), path.join(project, config));
    await fs.symlink(realpathSync(path.join(ROOT, 'node_modules')), path.join(project, 'node_modules'));
    await write('src/greeting.ts', "export const greeting = 'hello';\n");
    await write('src/farewell.ts', "export const farewell = 'goodbye';\n");
    await write('http/widget-host/assets/widget.css', 'body { color: black; }\n');
  });

  after(async () => {
    await fs.rm(project, { recursive: true, force: true });
  });

  it('says what it does on the first build, and builds the sources and the assets', async () => {
    const first = build();
    assert.equal(first.status, 0, first.stderr);
    assert.match(first.stderr, /building agentrt into dist\/ \(the first build takes about \d+ s/);
    assert.match(await read('dist/src/greeting.js'), /greeting = 'hello'/);
    assert.equal(await read('dist/http/widget-host/assets/widget.css'), 'body { color: black; }\n');
  });

  it('writes nothing and says nothing when no source changed', async () => {
    const rewritten = await backdateDist();
    const again = build();
    assert.equal(again.status, 0, again.stderr);
    assert.equal(again.stderr, '');
    assert.deepEqual(await rewritten(), []);
  });

  it('compiles a changed source again, and copies a changed asset, leaving the rest alone', async () => {
    const rewritten = await backdateDist();
    await write('src/greeting.ts', "export const greeting = 'hello again';\n");
    await write('http/widget-host/assets/widget.css', 'body { color: navy; }\n');
    const again = build();
    assert.equal(again.status, 0, again.stderr);
    assert.match(await read('dist/src/greeting.js'), /greeting = 'hello again'/);
    assert.equal(await read('dist/http/widget-host/assets/widget.css'), 'body { color: navy; }\n');
    const changed = await rewritten();
    assert.ok(!changed.includes(path.join('dist', 'src', 'farewell.js')), `farewell.js was rewritten: ${changed.join(', ')}`);
  });

  it('builds a file deleted from dist/ again', async () => {
    await fs.rm(path.join(project, 'dist/src/farewell.js'));
    const again = build();
    assert.equal(again.status, 0, again.stderr);
    assert.match(await read('dist/src/farewell.js'), /farewell = 'goodbye'/);
  });

  it('fails with the compiler\'s message when a source does not compile', async () => {
    await write('src/broken.ts', 'export const broken: number = "text";\n');
    const failed = build();
    assert.notEqual(failed.status, 0);
    assert.match(failed.stderr, /src\/broken\.ts.*Type 'string' is not assignable to type 'number'/);
  });

  it('runs before `npm start` serves', async () => {
    const scripts = (JSON.parse(await read('package.json')) as { scripts: Record<string, string> }).scripts;
    assert.equal(scripts.start, 'node scripts/build.mjs && node dist/src/cli.js serve');
    assert.equal(scripts.build, 'node scripts/build.mjs');
  });
});

async function listFiles(folder: string): Promise<string[]> {
  const entries = await fs.readdir(folder, { withFileTypes: true });
  const nested = await Promise.all(entries.map((entry) => (entry.isDirectory() ? listFiles(path.join(folder, entry.name)) : [path.join(folder, entry.name)])));
  return nested.flat();
}
