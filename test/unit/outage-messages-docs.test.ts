// The docs quote what a client is told while Postgres or NATS is away word for
// word: every quoted message naming an unreachable dependency is one the node answers.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { DependencyHealth } from '../../actors/runtime/dependency-health';
import { BusUnavailableError } from '../../src/ports/bus';
import type { Dependency } from '../../src/ports/dependency-health';

const ROOT = path.resolve(__dirname, '../..');

/** Every `quoted` span of the docs (across line breaks, outside fenced blocks) that names an unreachable dependency. */
function quotedOutageMessages(): Array<{ file: string; quote: string }> {
  const documents = [...readdirSync(path.join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`), 'README.md'];
  return documents.flatMap((file) =>
    // Fenced blocks out first: their backticks would pair with the inline quotes' ones.
    [...readFileSync(path.join(ROOT, file), 'utf8').replace(/```[\s\S]*?```/g, '').matchAll(/`([^`]+)`/g)]
      .map((match) => match[1].replace(/\s+/g, ' ').trim())
      .filter((quote) => /unreachable/.test(quote) && /\((PostgreSQL|NATS)\)/.test(quote))
      .map((quote) => ({ file, quote })),
  );
}

/** What the node answers: a request's 503 per dependency, and /readyz's reason for each set of them down. */
function answeredMessages(): Set<string> {
  const messages = new Set<string>();
  const downSets: Dependency[][] = [['postgres'], ['nats'], ['postgres', 'nats']];
  for (const down of downSets) {
    const health = new DependencyHealth({ logger: pino({ level: 'silent' }) });
    health.track('postgres');
    health.track('nats');
    for (const dependency of down) {
      health.down(dependency);
      messages.add(health.unavailableError(dependency).message);
    }
    messages.add(`not ready: ${health.unavailableReason()}`);
    health.stop();
  }
  messages.add(new BusUnavailableError().message);
  return messages;
}

describe('docs on outages', () => {
  it('quote the messages the node answers while a dependency is away, word for word', () => {
    const quotes = quotedOutageMessages();
    assert.ok(quotes.length >= 4, 'docs/operations.md quotes the answers of an outage');
    const answered = answeredMessages();
    assert.deepEqual(
      quotes.filter(({ quote }) => !answered.has(quote)),
      [],
      `messages the node answers: ${[...answered].join(' | ')}`,
    );
  });
});
