// Storage port of the widgets area (api-decisions.md "Widgets"): widgets and
// widget sessions. persistence/repositories/widgets.store.ts implements it.
import type { WorkspaceStatus } from '../auth/workspace-access';
import type { PageRequest } from '../resource/pagination';
import type { WidgetRecord, WidgetSessionRecord } from '../widgets/records';
import type { ListFilter, RecordTable } from './foundation-store';

export interface WidgetListFilter extends ListFilter {
  agentId?: string;
}

export interface WidgetsStore {
  /**
   * Runs `work` in one database transaction with a store bound to it (joins an open one).
   * A deadlock or serialization failure runs the outermost transaction again
   * whole (persistence/transaction-runner.ts): `work` must have no effect
   * outside the database.
   * @throws AbortedError when that happened on every run (the client may retry)
   */
  transaction<T>(work: (store: WidgetsStore) => Promise<T>): Promise<T>;

  /** insert and update answer ALREADY_EXISTS for a hostname another widget (any account's) has. */
  widgets: RecordTable<WidgetRecord> & {
    /** Rows of `limit + 1` in page order (see toPage). */
    list(workspaceId: string, page: PageRequest, filter: WidgetListFilter): Promise<WidgetRecord[]>;
    /** The widget of this lower-case hostname, or null. */
    findByHostname(hostname: string): Promise<WidgetRecord | null>;
    /** The widget, its row locked until the transaction ends (a session being minted for it waits, and the reverse); null when absent. */
    findForUpdate(id: string): Promise<WidgetRecord | null>;
  };
  /** Deleting a widget deletes its sessions (the table's foreign key). */
  sessions: {
    /**
     * Inserts the session while its widget still serves `hostname` (the
     * token's audience), reading the widget under a share lock: a hostname
     * change in progress ends first and this sees its outcome, or waits for
     * this insert and then ends the session with the widget's others.
     * @returns false (nothing written) when the widget is gone or has another hostname
     */
    insert(record: WidgetSessionRecord, hostname: string): Promise<boolean>;
    /** Deletes every session of the widget (a hostname change ends them); answers how many. */
    deleteOfWidget(widgetId: string): Promise<number>;
    findById(id: string): Promise<WidgetSessionRecord | null>;
    /** The session with its widget and its workspace's status, in one read; null when either is gone. */
    findWithWidget(id: string): Promise<{ session: WidgetSessionRecord; widget: WidgetRecord; workspaceStatus: WorkspaceStatus } | null>;
    delete(id: string): Promise<void>;
    /** Deletes at most `limit` sessions that expired before `before` (skipping rows another node is deleting); answers how many. */
    deleteExpired(before: Date, limit: number): Promise<number>;
  };
}
