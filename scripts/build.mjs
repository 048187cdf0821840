// Builds agentrt into dist/ (`npm run build`, and before `npm start` and `npm test`).
// Incremental: tsc keeps what it compiled in dist/tsconfig.build.tsbuildinfo and
// compiles again only the files whose content changed, with what depends on
// them; a build with no change writes nothing, so a second start is quick.
// Run from the project root (npm does).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const CONFIG = 'tsconfig.build.json';
/** Where tsc records the last build (tsconfig.build.json's tsBuildInfoFile); under dist/, so removing dist/ starts afresh. */
const BUILD_INFO = 'dist/tsconfig.build.tsbuildinfo';
/** Files tsc does not compile but the node serves, copied when they differ. */
const ASSETS = { from: 'http/widget-host/assets', to: 'dist/http/widget-host/assets' };

const root = process.cwd();
const fromRoot = (...parts) => path.join(root, ...parts);

forgetBuildWhenOutputsAreMissing();
if (!fs.existsSync(fromRoot(BUILD_INFO))) {
  process.stderr.write('building agentrt into dist/ (the first build takes about 20 s; later ones compile only what changed)…\n');
}
const tsc = createRequire(fromRoot('package.json')).resolve('typescript/bin/tsc');
const { status } = spawnSync(process.execPath, [tsc, '-p', CONFIG], { cwd: root, stdio: 'inherit' });
if (status !== 0) process.exit(status ?? 1);
copyChanged(fromRoot(ASSETS.from), fromRoot(ASSETS.to));

/**
 * tsc trusts its record of what it wrote: an output deleted since (a cleaned
 * folder under dist/) would never come back. When one is missing, the record
 * goes and everything is compiled again.
 */
function forgetBuildWhenOutputsAreMissing() {
  if (!fs.existsSync(fromRoot(BUILD_INFO))) return;
  const { include } = JSON.parse(fs.readFileSync(fromRoot(CONFIG), 'utf8'));
  const missing = include.flatMap((folder) => sources(fromRoot(folder))).find((file) => !fs.existsSync(outputOf(file)));
  if (missing === undefined) return;
  process.stderr.write(`${path.relative(root, outputOf(missing))} is missing: compiling everything again\n`);
  fs.rmSync(fromRoot(BUILD_INFO));
}

function sources(folder) {
  if (!fs.existsSync(folder)) return [];
  return fs.readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(folder, entry.name);
    if (entry.isDirectory()) return sources(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

function outputOf(source) {
  return fromRoot('dist', path.relative(root, source).replace(/\.ts$/, '.js'));
}

/** Copies the files of `from` that `to` lacks or holds with other content; the others keep their dates. */
function copyChanged(from, to) {
  if (!fs.existsSync(from)) return;
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isDirectory()) {
      copyChanged(source, target);
      continue;
    }
    const content = fs.readFileSync(source);
    if (fs.existsSync(target) && content.equals(fs.readFileSync(target))) continue;
    fs.mkdirSync(to, { recursive: true });
    fs.writeFileSync(target, content);
  }
}
