// The V8 heap setting a node's process runs with: allocation-site
// pretenuring off. V8 watches how many objects of each allocation site (an
// object or array literal in the code) survive a young-generation collection;
// above 85 % it allocates that site's objects straight into old space from
// then on. A runtime's objects live as long as its work waits: a burst that
// queues deliveries for a second makes their records, turns and lanes look
// long-lived, and the sites stay tenured once the queues drain. Their objects
// then die young in old space, and until the next major GC they keep what they
// reference alive through every scavenge, which promotes it (a turn's whole
// graph: its entry, the delivery record, the 2 KB body). Measured with
// bench/webhooks.ts at 1,000 events/s: 321 MB promoted in 15 s with
// pretenuring, 85 MB without; the major GCs that followed were the webhook
// latency tail (docs/runtime.md, "Heap").
import { setFlagsFromString } from 'node:v8';

const PRETENURING_OFF = '--no-allocation-site-pretenuring';
const PRETENURING_ON = '--allocation-site-pretenuring';

/**
 * Turns allocation-site pretenuring off for this process, unless the command
 * line chose it explicitly (`node --allocation-site-pretenuring …`: the
 * operator's choice wins). Set at start-up it takes effect: V8's own trace
 * shows no site tenured after it (test/runtime/heap-tuning.test.ts).
 */
export function tuneHeapForActorRuntime(execArgv: readonly string[] = process.execArgv): void {
  if (execArgv.includes(PRETENURING_ON)) return;
  setFlagsFromString(PRETENURING_OFF);
}
