// A turn's write as the turn writer takes it, with nothing but what a test
// names: no outbox rows, reminders, commands or projection changes.
import type { TurnWrite } from '../../persistence/runtime/turn-writer';

export function turnWriteOf(fields: Pick<TurnWrite, 'fence' | 'kind' | 'actorId' | 'key'> & Partial<TurnWrite>): TurnWrite {
  return {
    outbox: [],
    remindersSet: [],
    remindersCancelled: [],
    processedCommandIds: [],
    sends: [],
    changes: [],
    ...fields,
  };
}
