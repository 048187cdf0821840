// The README's path from a started node to an objective completed on a local
// model, walked as a reader would: the bash blocks of "A first session with
// curl", "Run your first objective" and "On a local model", taken from
// README.md by their headings, typed into one bash shell (the approval into a
// second one, as the README says) whose working directory is the parent of the
// node's data folder, against the built node started as the README says, then
// stopped and started again with the setting the local-model section names. A
// fake OpenAI-compatible server stands in for Ollama: the only edits to the
// blocks are its address and the node's port.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fakeAnswers, startFakeOpenRouter, type FakeOpenRouter } from '../support/fake-openrouter';
import { assertBuilt, cliEnv, startServe, type ServeProcess } from './cli-process';

const README = readFileSync(path.resolve(__dirname, '../../README.md'), 'utf8');
/** Where the README's blocks expect the node and the local model server. */
const README_API = 'http://127.0.0.1:8080';
const README_OLLAMA = '127.0.0.1:11434';
const ANSWER = 'The capital of Norway is Oslo.';

/** The README's lines from the heading `title` to the next heading of level 2 or higher (a `#` in a code block is a comment). */
function section(title: string): string {
  const lines = README.split('\n');
  const start = lines.indexOf(title);
  assert.ok(start >= 0, `README.md has a section "${title}"`);
  let fenced = false;
  const end = lines.findIndex((line, index) => {
    if (line.startsWith('```')) fenced = !fenced;
    return index > start && !fenced && /^#{1,2} /.test(line);
  });
  return lines.slice(start, end < 0 ? undefined : end).join('\n');
}

/** The bash blocks of a README section, in order. */
function bashBlocks(title: string): string[] {
  const blocks = [...section(title).matchAll(/```bash\n([\s\S]*?)```/g)].map((match) => match[1]);
  assert.ok(blocks.length > 0, `README.md's "${title}" has bash blocks (fenced \`\`\`bash: they use bash arrays)`);
  return blocks;
}

/** `text` with every `from` replaced; the README must still say `from`, else the test would run something else. */
function substitute(text: string, from: string, to: string): string {
  assert.ok(text.includes(from), `the README block names ${from}:\n${text}`);
  return text.split(from).join(to);
}

/** A bash reading commands from its stdin, as a terminal a person types into. */
interface Shell {
  /** Types the text, then a line that echoes a marker; resolves with what the text printed once the marker shows. */
  run(text: string): Promise<string>;
  /** Resolves with the output so far once it includes `text` (the command typed last is still running). */
  printed(text: string): Promise<string>;
  close(): Promise<void>;
}

function startShell(cwd: string, env: NodeJS.ProcessEnv): Shell {
  const child: ChildProcess = spawn('bash', [], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let exited = false;
  /** Start of the output the next `run` reports. */
  let consumed = 0;
  let markers = 0;
  /** Each pending wait: true once it has settled. */
  const waits = new Set<() => boolean>();
  const check = () => {
    for (const wait of waits) if (wait()) waits.delete(wait);
  };
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    check();
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.once('exit', () => {
    exited = true;
    check();
  });
  const printed = (text: string) =>
    new Promise<string>((resolve, reject) => {
      const from = consumed;
      waits.add(() => {
        if (stdout.includes(text, from)) resolve(stdout.slice(from));
        else if (exited) reject(new Error(`bash exited before printing "${text}":\nstdout:\n${stdout}\nstderr:\n${stderr}`));
        else return false;
        return true;
      });
      check();
    });
  return {
    printed,
    async run(text) {
      const marker = `@@readme-block-${++markers}@@\n`;
      child.stdin!.write(`${text}\necho '${marker.trimEnd()}'\n`);
      const output = await printed(marker);
      consumed = stdout.indexOf(marker, consumed) + marker.length;
      return output.slice(0, output.indexOf(marker));
    },
    async close() {
      child.stdin!.end();
      if (!exited) await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

/** The JSON `data:` of each Server-Sent Event in a stream's output. */
function streamedEvents(output: string): { type: string }[] {
  return output.split('\n').filter((line) => line.startsWith('data: ')).map((line) => (JSON.parse(line.slice(6)) as { data: { type: string } }).data);
}

interface ObjectiveView {
  metadata: { id: string };
  info: { status: string; lastMessage?: string; usage?: { costCents: number } };
}

describe('the README path, from a started node to an objective on a local model', function () {
  this.timeout(180_000);
  let fake: FakeOpenRouter;
  let folder: string;
  let env: NodeJS.ProcessEnv;
  let node: ServeProcess | undefined;
  let api: string;
  let shell: Shell;
  let workspace: string;
  let firstObjective: string;

  const token = () => readFileSync(path.join(folder, '.agentrt/global-api-key.token'), 'utf8').trim();
  async function get<T>(route: string): Promise<T> {
    const response = await fetch(`${api}${route}`, { headers: { authorization: `Bearer ${token()}` } });
    assert.equal(response.status, 200, route);
    return (await response.json()) as T;
  }

  before(async () => {
    assertBuilt();
    fake = await startFakeOpenRouter();
    fake.fallback(fakeAnswers.completion({ content: ANSWER }));
    folder = await fs.mkdtemp(path.join(os.tmpdir(), 'agentrt-readme-'));
    // The README runs the node and the shell at the repository root, where the data folder is ./.agentrt.
    // The shells' `node -pe` is the node running this test.
    env = cliEnv({ AGENTRT_DATA_DIR: path.join(folder, '.agentrt'), PORT: '0', PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}` });
    node = await startServe(env);
    api = node.url;
    shell = startShell(folder, env);
  });

  after(async () => {
    await shell?.close();
    await node?.stop('SIGKILL');
    await fake?.close();
    if (folder) await fs.rm(folder, { recursive: true, force: true });
  });

  it('answers each step of the first session on a line of its own', async () => {
    const [block] = bashBlocks('## A first session with curl');
    const answers = (await shell.run(substitute(block, README_API, api))).trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.equal(answers.length, 3, 'the account, the workspace\'s API keys and the key\'s profile');
    const [account, keys, profile] = answers as [{ metadata: { id: string } }, { items: { metadata: { name: string } }[] }, { info: { workspaceIds: string[]; scopes: string[] } }];
    assert.match(account.metadata.id, /^acc_/);
    assert.deepEqual(keys.items.map((key) => key.metadata.name), ['demo-key']);
    assert.deepEqual(profile.info.scopes, ['agents:manage', 'api_keys:read']);
    [workspace] = profile.info.workspaceIds;
    assert.match(workspace, /^ws_/);
  });

  it('runs the first objective to its answer once a second shell approves the tool call', async () => {
    const [start, approve] = bashBlocks('## Run your first objective');
    assert.ok(workspace, 'the first session ran');
    const running = shell.run(start);
    // The stream stays open until the approval; a block that ended instead went wrong.
    const awaiting = await Promise.race([
      shell.printed('OBJECTIVE_EVENT_TYPE_TOOL_APPROVAL_REQUESTED'),
      running.then((output) => assert.fail(`the block ended before a tool call awaited approval:\n${output}`)),
    ]);
    firstObjective = /^(obj_\w+)$/m.exec(awaiting)?.[1] ?? '';
    assert.ok(firstObjective, `the block echoes the objective's id:\n${awaiting}`);

    // "From another shell, with API, TOKEN, WORKSPACE and OBJECTIVE set to the same values".
    const second = startShell(folder, { ...env, API: api, TOKEN: token(), WORKSPACE: workspace, OBJECTIVE: firstObjective });
    const approved = await second.run(approve);
    await second.close();
    assert.equal((JSON.parse(approved.trimEnd()) as ObjectiveView).metadata.id, firstObjective, 'the approval answers the objective, on a line of its own');

    const types = streamedEvents(await running).map((event) => event.type);
    assert.equal(types.at(-1), 'OBJECTIVE_EVENT_TYPE_FINALIZED', 'the stream ends after FINALIZED');
    const objective = await get<ObjectiveView>(`/v1/workspaces/${workspace}/objectives/${firstObjective}`);
    assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED');
    assert.equal(objective.info.lastMessage, 'Order A-1 is refunded.');
  });

  it('completes an objective on the local model at a cost of 0 after the restart the README asks for', async () => {
    assert.ok(firstObjective, 'the first objective ran');
    const text = section('## On a local model');
    assert.match(text, /stop the running node \(Ctrl\+C/, 'the section says to stop the node from npm start');
    const restart = /`(\w+)=(\w+) npm start`/.exec(text);
    assert.ok(restart, 'the section says to start it again with a setting');
    assert.deepEqual(await node!.stop('SIGINT'), { code: 0, signal: null });
    node = await startServe({ ...env, PORT: new URL(api).port, [restart[1]]: restart[2] });
    assert.equal(node.url, api, 'the node is back where the shell\'s API points');

    const [block] = bashBlocks('## On a local model');
    const fakeAddress = new URL(fake.baseUrl).host;
    const output = await shell.run(substitute(block, README_OLLAMA, fakeAddress));
    assert.equal(streamedEvents(output).at(-1)?.type, 'OBJECTIVE_EVENT_TYPE_FINALIZED', `the stream ends after FINALIZED:\n${output}`);

    assert.deepEqual(fake.requests.map((request) => [request.path, request.body.model]), [['/v1/chat/completions', 'qwen2.5:7b']]);
    const { items } = await get<{ items: ObjectiveView[] }>(`/v1/workspaces/${workspace}/objectives`);
    const local = items.filter((objective) => objective.metadata.id !== firstObjective);
    assert.equal(local.length, 1, 'one objective besides the first');
    const objective = await get<ObjectiveView>(`/v1/workspaces/${workspace}/objectives/${local[0].metadata.id}`);
    assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED');
    assert.equal(objective.info.lastMessage, ANSWER);
    assert.equal(objective.info.usage?.costCents, 0);
  });
});
