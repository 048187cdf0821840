// A child process for test/runtime/heap-tuning.test.ts: allocates a million
// objects at one allocation site and keeps every one (a linked list: no array
// to grow and copy), so each young-generation collection finds all of the
// site's objects alive, which makes V8 tenure the site unless pretenuring is
// off. With `tune` as its argument it calls tuneHeapForActorRuntime first.
// Run it with --trace-pretenuring-statistics (V8 prints each site's decision)
// and --require tsx/cjs (under tsx's ESM loader V8 decided differently).
import { tuneHeapForActorRuntime } from '../../actors/runtime/heap-tuning';

if (process.argv.includes('tune')) tuneHeapForActorRuntime();

interface Link {
  index: number;
  previous: Link | null;
}

function link(index: number, previous: Link | null): Link {
  return { index, previous };
}

let head: Link | null = null;
for (let index = 0; index < 1_000_000; index += 1) head = link(index, head);
process.stdout.write(`kept ${head?.index}\n`);
