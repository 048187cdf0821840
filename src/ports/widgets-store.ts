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
  /** insert and update answer ALREADY_EXISTS for a hostname another widget (any account's) has. */
  widgets: RecordTable<WidgetRecord> & {
    /** Rows of `limit + 1` in page order (see toPage). */
    list(workspaceId: string, page: PageRequest, filter: WidgetListFilter): Promise<WidgetRecord[]>;
    /** The widget of this lower-case hostname, or null. */
    findByHostname(hostname: string): Promise<WidgetRecord | null>;
  };
  /** Deleting a widget deletes its sessions (the table's foreign key). */
  sessions: {
    insert(record: WidgetSessionRecord): Promise<WidgetSessionRecord>;
    findById(id: string): Promise<WidgetSessionRecord | null>;
    /** The session with its widget and its workspace's status, in one read; null when either is gone. */
    findWithWidget(id: string): Promise<{ session: WidgetSessionRecord; widget: WidgetRecord; workspaceStatus: WorkspaceStatus } | null>;
    delete(id: string): Promise<void>;
    /** Deletes at most `limit` sessions that expired before `before` (skipping rows another node is deleting); answers how many. */
    deleteExpired(before: Date, limit: number): Promise<number>;
  };
}
