// A bench's driver: the same bench file forked with DRIVER=1, playing the
// node's outsides (clients, receivers, tools) so their CPU is not the node's.
// Requests go over the IPC channel as {id, request} and come back as {id,
// result}; the driver announces itself with {ready: true, ...}.
import { fork, type ChildProcess } from 'node:child_process';

export interface DriverProcess<Request, Ready> {
  /** The driver's ready message, once it sent it. */
  ready: Promise<Ready>;
  call<Result>(request: Request): Promise<Result>;
  child: ChildProcess;
}

/** Forks `file` as the driver (its PROFILE emptied: only the node is profiled). */
export function startDriverProcess<Request, Ready extends { ready: true } = { ready: true }>(file: string): DriverProcess<Request, Ready> {
  const child = fork(file, [], { env: { ...process.env, DRIVER: '1', PROFILE: '' }, execArgv: ['--import', 'tsx'] });
  const waiting = new Map<number, (result: unknown) => void>();
  let next = 0;
  let markReady: (message: Ready) => void;
  const ready = new Promise<Ready>((resolve) => (markReady = resolve));
  child.on('message', (message: { id?: number; result?: unknown; ready?: boolean }) => {
    if (message.ready) return markReady(message as Ready);
    waiting.get(message.id!)?.(message.result);
    waiting.delete(message.id!);
  });
  return {
    child,
    ready,
    call<Result>(request: Request) {
      next += 1;
      const id = next;
      return new Promise<Result>((resolve) => {
        waiting.set(id, resolve as (result: unknown) => void);
        child.send({ id, request });
      });
    },
  };
}
