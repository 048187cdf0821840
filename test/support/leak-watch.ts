// Canary secrets for leak tests: hand out unique values, record every response
// and error message a suite sees, and report any text (or log line) that
// contains one of the canaries.
import type { ApiResponse } from './api';

export class LeakWatch {
  private readonly seen: string[] = [];
  private used = 0;

  /** @param marker a unique string every canary starts with */
  constructor(private readonly marker: string) {}

  /** A new canary value: a secret no response, log line or error may contain. */
  canary(): string {
    this.used += 1;
    return `${this.marker}-${this.used}`;
  }

  /** How many canaries the suite used (so a check over nothing fails). */
  get canariesUsed(): number {
    return this.used;
  }

  /** Records a whole response (status, body, headers) for the final check. */
  record<T extends ApiResponse>(response: T): T {
    this.seen.push(JSON.stringify({ status: response.status, body: response.body, headers: [...response.headers] }));
    return response;
  }

  /** Runs `work`, recording the message of any error it throws. */
  async recordErrors<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      this.seen.push(String((error as Error).message));
      throw error;
    }
  }

  /** Every recorded text and log line that contains a canary. */
  leaks(logs: readonly string[]): string[] {
    return [...this.seen, ...logs].filter((text) => text.includes(this.marker));
  }
}
