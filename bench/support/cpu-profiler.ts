// A CPU profile of a bench's measured phase (PROFILE=<file>), written as a
// .cpuprofile for chrome://inspect or speedscope; the benches share it.
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector';

/** Starts profiling this process; `stopInto` writes what ran until then. */
export async function startProfiler(): Promise<{ stopInto(file: string): Promise<void> }> {
  const session = new Session();
  session.connect();
  const post = (method: string) => new Promise<unknown>((resolve, reject) => session.post(method, (error, result) => (error ? reject(error) : resolve(result))));
  await post('Profiler.enable');
  await post('Profiler.start');
  return {
    async stopInto(file) {
      const { profile } = (await post('Profiler.stop')) as { profile: unknown };
      await writeFile(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}
