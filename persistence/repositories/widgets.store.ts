// WidgetsStore over TypeORM: widgets and widget sessions (migration Widgets).
// The hostname's uniqueness is the unique index's (race-safe); the session read
// of every widget request joins its widget in one statement.
import type { DataSource } from 'typeorm';
import type { WorkspaceStatus } from '../../src/auth/workspace-access';
import type { WidgetsStore } from '../../src/ports/widgets-store';
import { WidgetEntity, WidgetSessionEntity } from '../entities/widget.entity';
import { registerUniqueMessage, translateDriverError } from './driver-errors';
import { fetchPage } from './list-query';
import { entityColumns, readRows, readStatement, recordTable } from './record-table';

registerUniqueMessage('uq_widgets_hostname', 'a widget with this hostname already exists (hostnames are unique across all accounts)');

export function createWidgetsStore(dataSource: DataSource): WidgetsStore {
  const manager = dataSource.manager;
  const widgets = manager.getRepository(WidgetEntity);
  const sessions = manager.getRepository(WidgetSessionEntity);
  const widgetColumns = entityColumns(manager, WidgetEntity, 'w');
  const sessionColumns = entityColumns(manager, WidgetSessionEntity, 's');
  const sessionWithWidget = readStatement(
    `SELECT ${sessionColumns.json} AS s, ${widgetColumns.json} AS w, ws.status AS workspace_status FROM widget_sessions s JOIN widgets w ON w.id = s.widget_id JOIN workspaces ws ON ws.id = s.workspace_id WHERE s.id = $1`,
  );
  return {
    widgets: {
      ...recordTable(manager, WidgetEntity),
      list(workspaceId, page, filter) {
        const query = widgets.createQueryBuilder('w').where('w.workspace_id = :workspaceId', { workspaceId });
        if (filter.agentId !== undefined) query.andWhere('w.agent_id = :agentId', { agentId: filter.agentId });
        return fetchPage(query, 'w', page, filter);
      },
      findByHostname: (hostname) => widgets.findOneBy({ hostname }),
    },
    sessions: {
      async insert(record) {
        try {
          await sessions.insert(record);
        } catch (error) {
          throw translateDriverError(error);
        }
        return record;
      },
      findById: (id) => sessions.findOneBy({ id }),
      async findWithWidget(id) {
        const row = (await readRows(manager, sessionWithWidget, [id]))[0];
        const session = row ? sessionColumns.decode(row.s) : null;
        const widget = row ? widgetColumns.decode(row.w) : null;
        return session && widget ? { session, widget, workspaceStatus: row.workspace_status as WorkspaceStatus } : null;
      },
      async delete(id) {
        await sessions.delete({ id });
      },
      async deleteExpired(before, limit) {
        const rows: Array<{ deleted: number }> = await manager.query(
          `WITH gone AS (
             DELETE FROM widget_sessions WHERE id IN (
               SELECT id FROM widget_sessions WHERE expires_at < $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED
             ) RETURNING 1
           ) SELECT count(*)::int AS deleted FROM gone`,
          [before, limit],
        );
        return rows[0].deleted;
      },
    },
  };
}
