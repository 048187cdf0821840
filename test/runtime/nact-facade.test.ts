// Our nact facade stops whole trees: stopping an actor stops the actors under
// it, and stopping the system stops every actor (nact 7.6.2 alone leaves the
// children running, with their idle timers).
import assert from 'node:assert/strict';
import { dispatch, spawnActor, startSystem, stopActor, type ActorRef, type SystemRef } from '../../actors/nact/nact';

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** An actor that counts its messages and records when it stopped. */
function counter(parent: ActorRef<unknown> | SystemRef, name: string, stopped: string[]): ActorRef<string> {
  return spawnActor<number, string>(parent, (count) => count + 1, name, { initialState: 0, shutdownAfterMs: 600_000, afterStop: () => stopped.push(name) });
}

describe('nact facade', () => {
  it('stops the children and grandchildren of a stopped actor', async () => {
    const system = startSystem();
    const stopped: string[] = [];
    const parent = counter(system, 'parent', stopped);
    const child = counter(parent, 'child', stopped);
    counter(child, 'grandchild', stopped);
    counter(system, 'sibling', stopped);
    dispatch(child, 'hello');
    await tick();
    stopActor(parent);
    await tick();
    await tick();
    assert.deepEqual([...stopped].sort(), ['child', 'grandchild', 'parent'], 'the sibling runs on');
    stopActor(system);
  });

  it('stops every actor when the system stops', async () => {
    const system = startSystem();
    const stopped: string[] = [];
    const router = counter(system, 'router', stopped);
    for (const name of ['a', 'b', 'c']) dispatch(counter(router, name, stopped), 'hello');
    await tick();
    const timersBefore = process.getActiveResourcesInfo().filter((type) => type === 'Timeout').length;
    stopActor(system);
    await tick();
    await tick();
    assert.deepEqual([...stopped].sort(), ['a', 'b', 'c', 'router']);
    // Each actor's idle timer (shutdownAfterMs) is cleared with it.
    const timersAfter = process.getActiveResourcesInfo().filter((type) => type === 'Timeout').length;
    assert.ok(timersAfter <= timersBefore - 3, `timers before ${timersBefore}, after ${timersAfter}`);
  });
});
