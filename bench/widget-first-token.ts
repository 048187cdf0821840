// Widget first-token benchmark (issue 26 target: a visitor's first answer
// token appears in the page within 50 ms of the model's first token): prints
// JSON lines, asserts nothing. The same measurement as
// test/browser/widget-streaming.test.ts, outside mocha, with its harness
// (test/browser/support/streaming-widget.ts): the node in this process (real
// HTTP API, embedded runtime, a fresh Postgres database), the fake OpenRouter
// streaming each answer slowly (CHUNK_DELAY_MS between chunks, 8 characters a
// chunk), Debian's Chromium on the chat page. One visitor asks ANSWERS
// questions in turn (default 30); for each, the time from the provider
// writing the first content chunk to the page's pending answer first showing
// text (a MutationObserver in the page; both clocks are this machine's).
// Prints p50/p99/max of that latency and the page's weight (its files,
// gzip-compressed). Run with `npm run bench:widget`.
import { sharedTestDatabase } from '../test/support/global-setup';
import { assetWeights } from '../test/browser/support/fake-widget-host';
import { openStreamingChat, percentile, startStreamingWidget } from '../test/browser/support/streaming-widget';

const ANSWERS = Number(process.env.ANSWERS ?? 30);
const CHUNK_DELAY_MS = Number(process.env.CHUNK_DELAY_MS ?? 100);
const TARGET_MS = 50;

async function main(): Promise<void> {
  const database = await sharedTestDatabase(); // a fresh database, dropped below
  const widget = await startStreamingWidget();
  try {
    const context = await widget.chrome.browser.newContext();
    const chat = await openStreamingChat(widget, context);
    const latencies: number[] = [];
    let missed = 0;
    for (let i = 1; i <= ANSWERS; i++) {
      const seen = await chat.ask(`Question ${i}`, `Answer ${i}: your order ships tomorrow morning.`, { chunkDelayMs: CHUNK_DELAY_MS, chunkChars: 8 });
      if (seen.firstTextAt === undefined) missed += 1; // no delta reached the page: only the final answer showed
      else latencies.push(seen.firstTextAt - seen.firstContentAt);
    }
    await context.close();
    const weights = assetWeights();
    console.log(JSON.stringify({
      answers: ANSWERS,
      chunkDelayMs: CHUNK_DELAY_MS,
      widgetFirstTokenP50Ms: percentile(latencies, 50),
      widgetFirstTokenP99Ms: percentile(latencies, 99),
      widgetFirstTokenMaxMs: Math.max(...latencies),
      widgetFirstTokenTargetMs: TARGET_MS,
      answersWithoutStreamedText: missed,
    }));
    console.log(JSON.stringify({ widgetPageGzipBytes: Object.values(weights).reduce((sum, bytes) => sum + bytes, 0), ...Object.fromEntries(Object.entries(weights).map(([name, bytes]) => [`${name}GzipBytes`, bytes])) }));
  } finally {
    await widget.close();
    await database.drop();
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
