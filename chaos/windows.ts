// Fault windows: from the moment a fault starts until a while after the run saw
// the system recovered. What a check tolerates only under a fault (an API
// error, a tool call sent again) it tolerates only inside one of these.
import { say, seconds } from './log';

export interface FaultWindow {
  name: string;
  start: number;
  end: number;
}

export class FaultWindows {
  readonly list: FaultWindow[] = [];

  /** Opens a window now (its end unknown until `close`). */
  open(name: string): FaultWindow {
    const window = { name, start: Date.now(), end: Number.POSITIVE_INFINITY };
    this.list.push(window);
    say(`FAULT ${name}`);
    return window;
  }

  /** The system is seen recovered: the window stays open `extraMs` more (clients back off before they come back). */
  close(window: FaultWindow, extraMs: number): void {
    window.end = Date.now() + extraMs;
    say(`recovered from "${window.name}" after ${seconds(Date.now() - window.start)} s (window open ${extraMs / 1000} s more)`);
  }

  /** True when [start, end] overlaps a window. */
  overlaps(start: number, end: number): boolean {
    return this.list.some((window) => start <= window.end && end >= window.start);
  }

  /** The window that holds the moment, if any. */
  at(moment: number): FaultWindow | undefined {
    return this.list.find((window) => moment >= window.start && moment <= window.end);
  }
}
